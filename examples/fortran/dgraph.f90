! dgraph.f90 — a distributed graph built from every rank's own vertices
! (nuce_graph_from_local) through the Fortran module: the 24 x 20 grid graph,
! rank r building its rows (1-based ids and CSR, 2D coordinates, two values
! per vertex: its id and a value of it). The first partition follows
! nuce_set_speeds; a phase recorded at other speeds makes nuce_maybe_remap
! move vertices; every record stays with its global id (owned, ghosts and
! gathered on rank 0); no coordinates is the same error on every rank.
! Prints "dgraph: all N checks passed on P ranks" and exits 0, or names
! every failed check and exits 1.
program dgraph
  use, intrinsic :: iso_c_binding, only: c_double, c_int64_t
  use mpi_f08
  use nuce
  use checks
  implicit none

  integer, parameter :: dp = c_double, i8 = c_int64_t
  integer, parameter :: nx = 20, ny = 24, n = nx * ny
  integer :: rank, nranks, ierr, r
  integer(i8) :: lo, hi, owned, ghosts
  integer(i8), allocatable :: ids(:), xadj(:), adjncy(:)
  real(dp), allocatable :: coords(:, :), records(:, :), values(:, :), back(:, :), none(:, :)
  real(dp), allocatable :: speeds(:)
  type(nuce_balancer) :: b
  type(nuce_graph) :: g, bad
  logical :: remapped

  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call MPI_Comm_size(MPI_COMM_WORLD, nranks)
  lo = int(rank, i8) * ny / nranks
  hi = int(rank + 1, i8) * ny / nranks
  call my_rows(lo, hi, ids, xadj, adjncy, coords, records)
  call nuce_balancer_create(MPI_COMM_WORLD, b)
  speeds = [(real(r + 1, dp), r = 0, nranks - 1)]
  call nuce_set_speeds(b, speeds)

  call nuce_graph_from_local(b, ids, xadj, adjncy, coords, records, g, ierr=ierr)
  call expect(ierr, NUCE_OK, .true., 'graph_from_local')
  call fresh(g, owned, ghosts, values, 'first partition')
  call share(owned, speeds, 'first partition in proportion to the speeds')

  ! A phase at the opposite speeds: the balance point moves vertices.
  speeds = [(real(nranks - r, dp), r = 0, nranks - 1)]
  call nuce_record_phase(b, real(owned, dp) * 1000, real(owned, dp) * 1000 / speeds(rank + 1) * 1e-6_dp)
  call nuce_maybe_remap(b, g, 1000_i8, values, remapped, ierr=ierr)
  call expect(ierr, NUCE_OK, .true., 'maybe_remap')
  call expect(merge(1, 0, remapped .or. nranks == 1), 1, .true., 'remapped after the speeds changed')
  if (remapped) call fresh(g, owned, ghosts, values, 'after maybe_remap')
  call share(owned, speeds, 'after the remap in proportion to the phase speeds')

  allocate (back(2, merge(n, 0, rank == 0)))
  call nuce_graph_gather(g, values, back, ierr)
  call expect(ierr, NUCE_OK, .true., 'gather')
  if (rank == 0) call expect(merge(1, 0, all(back(1, :) == [(real(r, dp), r = 1, n)]) .and. &
                                         all(back(2, :) == value_of(back(1, :)))), 1, .false., &
                             'gathered records in global order')

  ! No coordinates: refused on every rank, no handle.
  allocate (none(0, size(ids)))
  call nuce_graph_from_local(b, ids, xadj, adjncy, none, records, bad, ierr=ierr)
  call expect_error(ierr, NUCE_ERR_INVALID_INPUT, .true., 'graph_from_local(no coordinates)', &
                    'needs coordinates')

  ! An id given twice on the last rank (its second vertex takes its first
  ! one's id): the message names the id as the caller numbers it, with
  ! numflag 1 and with numflag 0 (a wording that no message rewriting knew).
  block
    integer(i8), allocatable :: twice(:)
    integer :: first
    type(nuce_graph) :: dup
    first = ((nranks - 1) * ny / nranks) * nx + 1
    twice = ids
    if (rank == nranks - 1 .and. size(twice) > 1) twice(2) = twice(1)
    call nuce_graph_from_local(b, twice, xadj, adjncy, coords, records, dup, ierr=ierr)
    call expect_error(ierr, NUCE_ERR_INVALID_INPUT, .true., 'graph_from_local(an id twice)', &
                      'rank ' // str(nranks - 1) // ' lists the id ' // str(first) // ' twice')
    call nuce_graph_from_local(b, twice - 1, xadj - 1, adjncy - 1, coords, records, dup, &
                               numflag=0, ierr=ierr)
    call expect_error(ierr, NUCE_ERR_INVALID_INPUT, .true., 'graph_from_local(an id twice, numflag 0)', &
                      'rank ' // str(nranks - 1) // ' lists the id ' // str(first - 1) // ' twice')
  end block

  call nuce_graph_free(g)
  call nuce_balancer_free(b)
  call finish('dgraph')

contains

  elemental function value_of(id) result(x)
    real(dp), intent(in) :: id
    real(dp) :: x
    x = 0.5_dp * id + 1
  end function value_of

  !> Rows lo + 1 .. hi of the nx x ny grid: 1-based ids, CSR of global ids, coordinates, records.
  subroutine my_rows(lo, hi, ids, xadj, adjncy, coords, records)
    integer(i8), intent(in) :: lo, hi
    integer(i8), allocatable, intent(out) :: ids(:), xadj(:), adjncy(:)
    real(dp), allocatable, intent(out) :: coords(:, :), records(:, :)
    integer(i8) :: row, col, v, i, k
    i = (hi - lo) * nx
    allocate (ids(i), xadj(i + 1), adjncy(4 * i), coords(2, i), records(2, i))
    i = 0
    k = 0
    xadj(1) = 1
    do row = lo, hi - 1
      do col = 0, nx - 1
        i = i + 1
        v = row * nx + col + 1
        ids(i) = v
        if (row > 0) then
          k = k + 1
          adjncy(k) = v - nx
        end if
        if (col > 0) then
          k = k + 1
          adjncy(k) = v - 1
        end if
        if (col + 1 < nx) then
          k = k + 1
          adjncy(k) = v + 1
        end if
        if (row + 1 < ny) then
          k = k + 1
          adjncy(k) = v + nx
        end if
        xadj(i + 1) = k + 1
        coords(:, i) = [real(col, dp), real(row, dp)]
        records(:, i) = [real(v, dp), value_of(real(v, dp))]
      end do
    end do
    adjncy = adjncy(1:k)
  end subroutine my_rows

  !> The slot buffer after a layout change, every record checked against its global id.
  subroutine fresh(g, owned, ghosts, values, when)
    type(nuce_graph), intent(in) :: g
    integer(i8), intent(out) :: owned, ghosts
    real(dp), allocatable, intent(out) :: values(:, :)
    character(len=*), intent(in) :: when
    integer(i8), allocatable :: slot_ids(:)
    call nuce_graph_sizes(g, owned, ghosts)
    allocate (values(2, owned + ghosts), slot_ids(owned + ghosts))
    values = -1
    call nuce_graph_read(g, values, ierr)
    call expect(ierr, NUCE_OK, .false., 'read (' // when // ')')
    call nuce_graph_exchange_ghosts(g, values, ierr)
    call expect(ierr, NUCE_OK, .true., 'exchange_ghosts (' // when // ')')
    call nuce_graph_owned(g, slot_ids(1:owned))
    call nuce_graph_ghosts(g, slot_ids(owned + 1:))
    call expect(merge(1, 0, all(values(1, :) == real(slot_ids, dp)) .and. &
                            all(values(2, :) == value_of(real(slot_ids, dp)))), 1, .false., &
                'every record belongs to its global id (' // when // ')')
  end subroutine fresh

  !> This rank owns its share of the n vertices for `targets`, within 25 % and a row.
  subroutine share(owned, targets, what)
    integer(i8), intent(in) :: owned
    real(dp), intent(in) :: targets(:)
    character(len=*), intent(in) :: what
    real(dp) :: want
    want = n * targets(rank + 1) / sum(targets)
    call expect(merge(1, 0, abs(real(owned, dp) - want) <= 0.25_dp * want + nx), 1, .false., what)
  end subroutine share

end program dgraph
