! dgraph.f90 — a distributed graph built from every rank's own vertices
! (nuce_graph_from_local) through the Fortran module: the 24 x 20 grid graph,
! rank r building its rows (1-based ids and CSR, 2D coordinates, two values
! per vertex: its id and a value of it). The first partition follows
! nuce_set_speeds; a phase recorded at other speeds makes nuce_maybe_remap
! move vertices; every record stays with its global id (owned, ghosts and
! gathered on rank 0); no coordinates is the same error on every rank.
! After a step that changes every record, the graph is saved
! (nuce_graph_save) and restarted on the ranks but the last
! (nuce_saved_graph_open / _create on a sub-communicator, speeds p' - r):
! the same vertices with bit-identical records, in proportion to those
! speeds; a slot buffer of the wrong m, records of another length, the file
! opened as a grid's are errors. Finally the last rank leaves (nuce_depart,
! nuce_graph_depart, nuce_depart_finish_all): the others hold every vertex
! with its record, bit for bit. Then a standby rank joins a new graph
! (nuce_pool_admit_all, nuce_pool_wait_all). Prints "dgraph: all N checks passed on P
! ranks" and exits 0, or names every failed check and exits 1.
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
  character(len=:), allocatable :: path

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
  call fresh(g, MPI_COMM_WORLD, 0, 'first partition', owned, ghosts, values)
  call share(owned, speeds, 'first partition in proportion to the speeds')

  ! A phase at the opposite speeds: the balance point moves vertices.
  speeds = [(real(nranks - r, dp), r = 0, nranks - 1)]
  call nuce_record_phase(b, real(owned, dp) * 1000, real(owned, dp) * 1000 / speeds(rank + 1) * 1e-6_dp)
  call nuce_maybe_remap(b, g, 1000_i8, values, remapped, ierr=ierr)
  call expect(ierr, NUCE_OK, .true., 'maybe_remap')
  call expect(merge(1, 0, remapped .or. nranks == 1), 1, .true., 'remapped after the speeds changed')
  if (remapped) call fresh(g, MPI_COMM_WORLD, 0, 'after maybe_remap', owned, ghosts, values)
  call share(owned, speeds, 'after the remap in proportion to the phase speeds')

  allocate (back(2, merge(n, 0, rank == 0)))
  call nuce_graph_gather(g, values, back, ierr)
  call expect(ierr, NUCE_OK, .true., 'gather')
  if (rank == 0) call expect(merge(1, 0, all(back(1, :) == [(real(r, dp), r = 1, n)]) .and. &
                                         all(back(2, :) == value_of(back(1, :), 0))), 1, .false., &
                             'gathered records in global order')

  ! A step changes every record (the saves carry the slot buffer's); then
  ! save, and restart on the ranks but the last (on the one rank alone).
  values(2, :) = value_of(values(1, :), 1)
  path = save_path()
  block
    real(dp), allocatable :: wrong(:, :)
    type(nuce_saved) :: as_grid
    type(MPI_Comm) :: sub
    logical :: exists, inside
    integer :: unit, ios
    ! A slot buffer of the wrong m on the last rank: refused on every rank, no file.
    allocate (wrong(merge(3, 2, rank == nranks - 1), size(values, 2)))
    wrong = 0
    call nuce_graph_save(g, path, wrong, ierr=ierr)
    call expect_error(ierr, NUCE_ERR_SHAPE_MISMATCH, .true., 'graph_save(values of the wrong m)', &
                      'must have m = 2', only_rank=nranks - 1)
    inquire (file=path, exist=exists)
    call expect(merge(1, 0, exists), 0, .false., 'no file after a refused save')
    call nuce_graph_save(g, path, values, [int(n, i8), 1_i8], ierr)
    call expect(ierr, NUCE_OK, .true., 'graph_save')
    call nuce_saved_open(b, path, as_grid, ierr)
    call expect(ierr, NUCE_ERR_INVALID_INPUT, .true., 'a graph''s file opened as a grid''s')
    inside = nranks == 1 .or. rank < nranks - 1
    call MPI_Comm_split(MPI_COMM_WORLD, merge(0, MPI_UNDEFINED, inside), rank, sub)
    if (inside) then
      call restart(sub, path)
      call MPI_Comm_free(sub)
    end if
    call MPI_Barrier(MPI_COMM_WORLD)
    if (rank == 0) then
      open (newunit=unit, file=path, status='old', iostat=ios)
      if (ios == 0) close (unit, status='delete')
    end if
  end block

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

  ! The last rank leaves: its vertices move to the others, which go on.
  if (nranks > 1) then
    block
      type(nuce_grid) :: no_grids(0)
      type(MPI_Comm) :: stay
      integer :: nleaving
      logical :: released
      call nuce_graph_depart(b, g, values, ierr)
      call expect_error(ierr, NUCE_ERR_INVALID_INPUT, .true., 'graph_depart before nuce_depart', &
                        'call nuce_depart first')
      call nuce_depart(b, rank == nranks - 1, nleaving, ierr)
      call expect(ierr, NUCE_OK, .true., 'depart')
      call expect(nleaving, 1, .true., 'one rank leaves')
      ! The graph not moved yet: refused on every rank, nothing changes.
      call nuce_depart_finish_all(b, no_grids, [g], stay, released, ierr)
      call expect_error(ierr, NUCE_ERR_INVALID_INPUT, .true., 'depart_finish_all(graph not moved)', &
                        'still gives vertices to a leaving rank')
      call nuce_graph_depart(b, g, values, ierr)
      call expect(ierr, NUCE_OK, .true., 'graph_depart')
      call nuce_depart_finish_all(b, no_grids, [g], stay, released, ierr)
      call expect(ierr, NUCE_OK, .true., 'depart_finish_all')
      call expect(merge(1, 0, released .eqv. rank == nranks - 1), 1, .false., &
                  'the last rank released, the others stay')
      if (.not. released) then
        call fresh(g, stay, 1, 'after the last rank left', owned, ghosts, values)
        call MPI_Comm_free(stay)
      end if
    end block
  end if

  call nuce_graph_free(g)
  call nuce_balancer_free(b)
  if (nranks > 1) call join_graph()
  call finish('dgraph')

contains

  !> A standby rank joins a graph: the last rank waits in a pool
  !> (nuce_pool_wait_all), the others build the graph on their communicator
  !> and admit it with their records (nuce_pool_admit_all); then every vertex
  !> once with its record on the grown communicator, the joined rank owning some.
  subroutine join_graph()
    type(nuce_pool) :: pool
    type(nuce_balancer) :: jb
    type(nuce_graph) :: jg
    type(nuce_graph), allocatable :: joined_graphs(:)
    type(nuce_grid) :: no_grids(0)
    type(nuce_grid), allocatable :: joined_grids(:)
    type(MPI_Comm) :: active, grown
    integer(i8) :: jlo, jhi, jowned, jghosts
    integer(i8), allocatable :: jids(:), jxadj(:), jadj(:)
    real(dp), allocatable :: jcoords(:, :), jrecords(:, :), jvalues(:, :)
    integer :: ar, as
    logical :: standby, joined
    standby = rank == nranks - 1
    call nuce_pool_create(MPI_COMM_WORLD, standby, active, pool)
    if (standby) then
      call nuce_pool_wait_all(pool, joined, grown, jb, joined_grids, joined_graphs, ierr)
      call expect(merge(1, 0, ierr == NUCE_OK .and. joined .and. size(joined_grids) == 0 .and. &
                              size(joined_graphs) == 1), 1, .false., 'join: wait_all gives the graph')
      jg = joined_graphs(1)
    else
      call MPI_Comm_rank(active, ar)
      call MPI_Comm_size(active, as)
      call nuce_balancer_create(active, jb)
      jlo = int(ar, i8) * ny / as
      jhi = int(ar + 1, i8) * ny / as
      call my_rows(jlo, jhi, jids, jxadj, jadj, jcoords, jrecords)
      call nuce_graph_from_local(jb, jids, jxadj, jadj, jcoords, jrecords, jg, ierr=ierr)
      call expect(ierr, NUCE_OK, .false., 'join: graph_from_local')
      call nuce_graph_sizes(jg, jowned, jghosts)
      allocate (jvalues(2, jowned + jghosts))
      call nuce_graph_read(jg, jvalues)
      call nuce_pool_admit_all(pool, jb, 1, no_grids, jg, jvalues, grown, ierr)
      call expect(ierr, NUCE_OK, .false., 'join: pool_admit_all')
      call MPI_Comm_free(active)
    end if
    call fresh(jg, grown, 0, 'after a standby rank joined', jowned, jghosts, jvalues)
    call expect(merge(1, 0, jowned > 0), 1, .false., 'join: every rank owns vertices')
    call nuce_pool_release(pool, jb)
    call nuce_pool_free(pool)
    call MPI_Comm_free(grown)
    call nuce_graph_free(jg)
    call nuce_balancer_free(jb)
  end subroutine join_graph

  !> The second value of vertex `id` after `step` steps (0: as built).
  elemental function value_of(id, step) result(x)
    real(dp), intent(in) :: id
    integer, intent(in) :: step
    real(dp) :: x
    x = 0.5_dp * id + 1
    if (step > 0) x = x / 3 + step * sqrt(id)
  end function value_of

  !> A save file under $TMPDIR (or /tmp) named after rank 0's clock (the same on every rank).
  function save_path() result(path)
    character(len=:), allocatable :: path
    character(len=1024) :: dir
    integer(i8) :: tick
    integer :: length, status
    call system_clock(tick)
    call MPI_Bcast(tick, 1, MPI_INTEGER8, 0, MPI_COMM_WORLD)
    call get_environment_variable('TMPDIR', dir, length, status)
    if (status /= 0 .or. length == 0) dir = '/tmp'
    path = trim(dir) // '/nuce-dgraph-f-' // str(int(mod(tick, 1000000000_i8))) // '.nuce'
  end function save_path

  !> The save at `path` restarted on the ranks of `sub` at speeds p' - r:
  !> every vertex once with its record bit for bit, each rank about its share.
  subroutine restart(sub, path)
    type(MPI_Comm), intent(in) :: sub
    character(len=*), intent(in) :: path
    type(nuce_balancer) :: rb
    type(nuce_saved_graph) :: s
    type(nuce_graph) :: rg
    integer(i8) :: sn, rowned, rghosts
    integer(i8), allocatable :: user(:)
    real(dp), allocatable :: sp(:), rvalues(:, :)
    integer :: ss, from
    call MPI_Comm_size(sub, ss)
    call nuce_balancer_create(sub, rb)
    sp = [(real(ss - r, dp), r = 0, ss - 1)]
    call nuce_set_speeds(rb, sp)
    call nuce_saved_graph_open(rb, path, s, ierr)
    call expect(ierr, NUCE_OK, .false., 'restart: saved_graph_open')
    call nuce_saved_graph_info(s, sn, from, user, ierr)
    call expect(merge(1, 0, ierr == NUCE_OK .and. sn == n .and. from == nranks .and. &
                            size(user) == 2), 1, .false., 'restart: the saved graph''s size and ranks')
    if (size(user) == 2) call expect(merge(1, 0, all(user == [int(n, i8), 1_i8])), 1, .false., &
                                     'restart: the saved user words')
    call nuce_saved_graph_create(s, rb, 3, rg, ierr=ierr)
    call expect(ierr, NUCE_ERR_SHAPE_MISMATCH, .false., 'restart: records of another length refused')
    call nuce_saved_graph_create(s, rb, 2, rg, ierr=ierr)
    call expect(ierr, NUCE_OK, .false., 'restart: saved_graph_create')
    call fresh(rg, sub, 1, 'restart', rowned, rghosts, rvalues)
    ! On the ranks of sub, its rank is the world rank.
    call share(rowned, sp, 'restart in proportion to the new speeds')
    call nuce_graph_free(rg)
    call nuce_saved_graph_free(s)
    call nuce_balancer_free(rb)
  end subroutine restart

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
        records(:, i) = [real(v, dp), value_of(real(v, dp), 0)]
      end do
    end do
    adjncy = adjncy(1:k)
  end subroutine my_rows

  !> The slot buffer of graph `g` (on the ranks of `comm`) after a layout
  !> change: every record checked bit for bit against its global id after
  !> `step` steps, every vertex owned once.
  subroutine fresh(g, comm, step, when, owned, ghosts, values)
    type(nuce_graph), intent(in) :: g
    type(MPI_Comm), intent(in) :: comm
    integer, intent(in) :: step
    character(len=*), intent(in) :: when
    integer(i8), intent(out) :: owned, ghosts
    real(dp), allocatable, intent(out) :: values(:, :)
    integer(i8), allocatable :: slot_ids(:)
    integer(i8) :: total
    integer :: ranks
    logical :: everyone
    ! A check is collective (over MPI_COMM_WORLD) when every rank is in comm.
    call MPI_Comm_size(comm, ranks)
    everyone = ranks == nranks
    call nuce_graph_sizes(g, owned, ghosts)
    allocate (values(2, owned + ghosts), slot_ids(owned + ghosts))
    values = -1
    call nuce_graph_read(g, values, ierr)
    call expect(ierr, NUCE_OK, .false., 'read (' // when // ')')
    call nuce_graph_exchange_ghosts(g, values, ierr)
    call expect(ierr, NUCE_OK, everyone, 'exchange_ghosts (' // when // ')')
    call nuce_graph_owned(g, slot_ids(1:owned))
    call nuce_graph_ghosts(g, slot_ids(owned + 1:))
    call expect(merge(1, 0, all(values(1, :) == real(slot_ids, dp)) .and. &
                            all(values(2, :) == value_of(real(slot_ids, dp), step))), 1, .false., &
                'every record belongs to its global id (' // when // ')')
    call MPI_Allreduce(owned, total, 1, MPI_INTEGER8, MPI_SUM, comm)
    call expect(merge(1, 0, total == n), 1, .false., 'every vertex owned once (' // when // ')')
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
