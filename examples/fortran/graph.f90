! graph.f90 — graphs, master-worker schedules and AMR allocation through the
! Fortran module, each result checked by recomputing it here: a 40 x 30 grid
! graph (1-based CSR, coordinates, vertex and edge weights) is partitioned for
! target weights (part weights and the cut recounted), partitioned for the
! ranks' speeds, scattered with two values per vertex (owned records, ghost
! records and the local adjacency compared with the global graph), migrated
! to the partition (records follow), gathered (identity), then schedules and
! AMR submeshes are checked, and misuse returns the same code on every rank.
! Run under mpirun with any number of ranks; prints "graph: all N checks
! passed on P ranks" and exits 0, or names every failed check and exits 1.
program graph
  use, intrinsic :: iso_c_binding, only: c_double, c_int64_t
  use mpi_f08
  use nuce
  use checks
  implicit none

  integer, parameter :: dp = c_double, i8 = c_int64_t
  integer, parameter :: nx = 40, ny = 30, n = nx * ny, m = 2
  integer :: rank, nranks, ierr, r
  integer(i8), allocatable :: xadj(:), adjncy(:), part(:), part0(:), owner(:), none(:)
  real(dp), allocatable :: vwgt(:), ewgt(:), coords(:, :), tpwgts(:), speeds(:)
  real(dp), allocatable :: records(:, :), values(:, :), back(:, :)
  real(dp) :: cut, cut0
  type(nuce_balancer) :: b
  type(nuce_graph) :: g
  logical :: remapped
  character(len=:), allocatable :: msg

  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call MPI_Comm_size(MPI_COMM_WORLD, nranks)
  call grid_graph(xadj, adjncy, vwgt, ewgt, coords)
  allocate (none(0), part(n), part0(n))

  ! Pure partitioning for targets 1 : 2 : 3, 1-based and 0-based numbering.
  tpwgts = [1.0_dp, 2.0_dp, 3.0_dp]
  call nuce_partition_graph(xadj, adjncy, 3, part, vwgt=vwgt, ewgt=ewgt, coords=coords, &
                            tpwgts=tpwgts, algo=NUCE_ALGO_BEST, edgecut=cut, ierr=ierr)
  call expect(ierr, NUCE_OK, .false., 'partition_graph(targets 1:2:3)')
  call check_partition(part, tpwgts, cut, 'partition_graph(targets 1:2:3)')
  call nuce_partition_graph(xadj - 1, adjncy - 1, 3, part0, vwgt=vwgt, ewgt=ewgt, &
                            coords=coords, tpwgts=tpwgts, numflag=0, edgecut=cut0, ierr=ierr)
  call expect(merge(NUCE_OK, -1, ierr == NUCE_OK .and. all(part0 == part) .and. cut0 == cut), &
              NUCE_OK, .false., 'numflag = 0 gives the same partition')
  call nuce_partition_graph(xadj, adjncy, 4, part, vwgt=vwgt, ewgt=ewgt, coords=coords, &
                            algo=NUCE_ALGO_RCB, edgecut=cut, ierr=ierr)
  call expect(ierr, NUCE_OK, .false., 'partition_graph(RCB, 4 equal parts)')
  call check_partition(part, [1.0_dp, 1.0_dp, 1.0_dp, 1.0_dp], cut, 'partition_graph(RCB)')
  call nuce_partition_graph(xadj, adjncy, 3, part, tpwgts=[1.0_dp, 2.0_dp], ierr=ierr)
  call expect_error(ierr, NUCE_ERR_INVALID_INPUT, .false., 'partition_graph(2 targets for 3 parts)', &
                    'tpwgts must have nparts entries')
  call nuce_partition_graph(xadj, adjncy, 3, part, numflag=0, ierr=ierr)
  call expect_error(ierr, NUCE_ERR_INVALID_INPUT, .false., 'partition_graph(1-based ids, numflag = 0)', &
                    'xadj(n + 1) - numflag')
  ! Vertex ids in messages are numbered as the caller numbers them: a
  ! self-loop at vertex 5 (its first neighbour, 4, replaced by 5) is vertex
  ! 5 with numflag 1 (the default), vertex 4 with numflag 0.
  block
    integer(i8), allocatable :: looped(:)
    looped = adjncy
    looped(xadj(5)) = 5
    call nuce_partition_graph(xadj, looped, 3, part, ierr=ierr)
    call expect_error(ierr, NUCE_ERR_INVALID_INPUT, .false., 'partition_graph(self-loop at vertex 5)', &
                      'self-loop at vertex 5')
    call nuce_partition_graph(xadj - 1, looped - 1, 3, part, numflag=0, ierr=ierr)
    call expect_error(ierr, NUCE_ERR_INVALID_INPUT, .false., &
                      'partition_graph(self-loop at vertex 4, numflag = 0)', 'self-loop at vertex 4')
    ! An id below numflag is named as written, not as the C API's shifted -1.
    looped(xadj(5)) = 0
    call nuce_partition_graph(xadj, looped, 3, part, ierr=ierr)
    call expect_error(ierr, NUCE_ERR_INVALID_INPUT, .false., 'partition_graph(id 0 with numflag 1)', &
                      'adjncy has an entry 0 below numflag 1')
  end block
  call nuce_partition_graph(xadj, adjncy, 3, part, coords=coords(:, 1:n - 1), ierr=ierr)
  call expect_error(ierr, NUCE_ERR_INVALID_INPUT, .false., 'partition_graph(coords too short)', &
                    'coords must be coords(dim, n)')

  ! Partitioning for the ranks' speeds 1 : 2 : ... (rank 0's graph).
  call nuce_balancer_create(MPI_COMM_WORLD, b)
  speeds = [(real(r + 1, dp), r = 0, nranks - 1)]
  call nuce_set_speeds(b, speeds)
  if (rank == 0) then
    call nuce_graph_partition(b, xadj, adjncy, part, vwgt=vwgt, ewgt=ewgt, coords=coords, &
                              edgecut=cut, ierr=ierr)
  else
    call nuce_graph_partition(b, none, none, part0(1:0), ierr=ierr)
  end if
  call expect(ierr, NUCE_OK, .true., 'graph_partition(speeds)')
  if (rank == 0) call check_partition(part, speeds, cut, 'graph_partition(speeds)')
  call MPI_Bcast(part, n, MPI_INTEGER8, 0, MPI_COMM_WORLD)
  if (rank == 0) then
    call nuce_graph_partition(b, xadj, adjncy, part0, vwgt=vwgt, ewgt=ewgt(2:), ierr=ierr)
  else
    call nuce_graph_partition(b, none, none, part0(1:0), ierr=ierr)
  end if
  ! The module finds the short ewgt on rank 0 and refuses the call there:
  ! every rank gets that reason (the others as "rank 0 failed: ...").
  msg = nuce_last_error()
  call expect_error(ierr, NUCE_ERR_INVALID_INPUT, .true., 'graph_partition(ewgt too short on rank 0)', &
                    'ewgt must have size(adjncy) entries')
  call expect(merge(NUCE_OK, -1, index(msg, ' entries (on world rank 0)') > 0), &
              NUCE_OK, .false., 'graph_partition(ewgt too short on rank 0) names rank 0')
  if (nranks > 1) then
    call nuce_graph_partition(b, xadj(1:merge(n + 1, 0, rank == 0)), adjncy, part0, &
                              algo=merge(NUCE_ALGO_RCB, NUCE_ALGO_BEST, rank == 1), ierr=ierr)
    call expect_error(ierr, NUCE_ERR_DISAGREEMENT, .true., 'graph_partition(algo differs on rank 1)', &
                      'rank(s) [1] call nuce_graph_partition(')
  end if

  ! Scatter two values per vertex; owned and ghost records, local adjacency.
  if (rank == 0) records = reshape([(value_of(r, 0.0_dp), r = 1, n)], [m, n])
  if (nranks > 1) then
    ! The record length m differs on the last rank: named as Fortran's m.
    if (rank == 0) then
      call nuce_graph_scatter(b, xadj, adjncy, records, g, ierr=ierr)
    else
      allocate (back(merge(m + 1, m, rank == nranks - 1), 0))
      call nuce_graph_scatter(b, none, none, back, g, ierr=ierr)
      deallocate (back)
    end if
    call expect_error(ierr, NUCE_ERR_DISAGREEMENT, .true., 'graph_scatter(m differs on the last rank)', &
                      'call nuce_graph_scatter(m ' // str(m + 1) // ')')
  end if
  if (rank == 0) then
    call nuce_graph_scatter(b, xadj, adjncy, records(:, 1:n), g, vwgt=vwgt, ewgt=ewgt, &
                            coords=coords, ierr=ierr)
    call expect(ierr, NUCE_OK, .true., 'graph_scatter')
  else
    allocate (records(m, 0))
    call nuce_graph_scatter(b, none, none, records, g, ierr=ierr)
    call expect(ierr, NUCE_OK, .true., 'graph_scatter')
  end if
  call check_layout(0.0_dp, 'after scatter')
  ! Misuse of the slot buffer: a wrong first extent on the last rank.
  if (rank == nranks - 1) then
    call nuce_graph_exchange_ghosts(g, values(1:1, :), ierr)
  else
    call nuce_graph_exchange_ghosts(g, values, ierr)
  end if
  msg = nuce_last_error()
  call expect_error(ierr, NUCE_ERR_SHAPE_MISMATCH, .true., 'graph_exchange_ghosts(m wrong on the last rank)', &
                    'values(m, :) must have m = ' // str(m) // " (the graph's record length): its first extent is 1")
  call expect(merge(NUCE_OK, -1, index(msg, 'first extent is 1 (on world rank ' // str(nranks - 1) // ')') > 0), &
              NUCE_OK, .false., 'graph_exchange_ghosts(m wrong on the last rank) names that rank')
  owner = part
  owner(n) = nranks
  call nuce_graph_migrate(g, values, owner, ierr)
  call expect_error(ierr, NUCE_ERR_INVALID_INPUT, .true., 'graph_migrate(owner out of range)', &
                    'owner ' // str(nranks) // ' is not a rank')

  ! Migrate to the partition by speeds; every record carries +1 along.
  values = values + 1
  call nuce_graph_migrate(g, values, part, ierr)
  call expect(ierr, NUCE_OK, .true., 'graph_migrate')
  call check_layout(1.0_dp, 'after migrate')
  call check_owned_are(part, 'owned vertices after migrate = the partition')

  ! A balance point; then gather: rank 0 gets every record back.
  call nuce_maybe_remap(b, g, 5_i8, values, remapped, ierr=ierr)
  call expect(ierr, NUCE_OK, .true., 'maybe_remap(graph)')
  if (remapped) call check_layout(1.0_dp, 'after a remap')
  allocate (back(m, merge(n, 0, rank == 0)))
  call nuce_graph_gather(g, values, back(:, 1:merge(n - 1, 0, rank == 0)), ierr)
  call expect_error(ierr, NUCE_ERR_SHAPE_MISMATCH, .true., 'graph_gather(global too short on rank 0)', &
                    'global has 1199 elements, 1200 expected')
  call nuce_graph_gather(g, values, back, ierr)
  call expect(ierr, NUCE_OK, .true., 'graph_gather')
  if (rank == 0) call expect(merge(NUCE_OK, -1, &
                             all(back == reshape([(value_of(r, 1.0_dp), r = 1, n)], [m, n]))), &
                             NUCE_OK, .false., 'gather returns every record')
  call nuce_graph_free(g)
  call nuce_balancer_free(b)

  call check_tasks()
  call check_amr()

  call finish('graph')

contains

  !> Vertex (i, j) of the nx x ny grid, 1-based.
  pure integer function id(i, j)
    integer, intent(in) :: i, j
    id = i + (j - 1) * nx
  end function id

  !> The record of vertex v, shifted by `plus`.
  pure function value_of(v, plus) result(x)
    integer, intent(in) :: v
    real(dp), intent(in) :: plus
    real(dp) :: x(m)
    x = [real(v, dp), 0.25_dp * v * v] + plus
  end function value_of

  !> The weight of the edge {u, v}, the same both ways.
  pure real(dp) function edge_weight(u, v)
    integer(i8), intent(in) :: u, v
    edge_weight = real(1 + mod(min(u, v), 3_i8), dp)
  end function edge_weight

  !> The 4-neighbour grid graph, 1-based CSR, with weights and coordinates.
  subroutine grid_graph(xadj, adjncy, vwgt, ewgt, coords)
    integer(i8), allocatable, intent(out) :: xadj(:), adjncy(:)
    real(dp), allocatable, intent(out) :: vwgt(:), ewgt(:), coords(:, :)
    integer :: i, j, k, v, di(4), dj(4)
    di = [0, -1, 1, 0]
    dj = [-1, 0, 0, 1]
    allocate (xadj(n + 1), adjncy(4 * n), vwgt(n), ewgt(4 * n), coords(2, n))
    xadj(1) = 1
    do j = 1, ny
      do i = 1, nx
        v = id(i, j)
        xadj(v + 1) = xadj(v)
        do k = 1, 4
          if (i + di(k) < 1 .or. i + di(k) > nx .or. j + dj(k) < 1 .or. j + dj(k) > ny) cycle
          adjncy(xadj(v + 1)) = id(i + di(k), j + dj(k))
          ewgt(xadj(v + 1)) = edge_weight(int(v, i8), adjncy(xadj(v + 1)))
          xadj(v + 1) = xadj(v + 1) + 1
        end do
        vwgt(v) = real(1 + mod(i, 3), dp)
        coords(:, v) = [real(i, dp), real(j, dp)]
      end do
    end do
    adjncy = adjncy(1:xadj(n + 1) - 1)
    ewgt = ewgt(1:xadj(n + 1) - 1)
  end subroutine grid_graph

  !> Parts in range, each part's weight within 3 % (plus one vertex) of its
  !> share of `targets`, and `cut` equal to the recounted cut.
  subroutine check_partition(part, targets, cut, what)
    integer(i8), intent(in) :: part(:)
    real(dp), intent(in) :: targets(:), cut
    character(len=*), intent(in) :: what
    real(dp) :: weight(size(targets)), recount
    integer :: v
    integer(i8) :: e
    if (any(part < 0 .or. part >= size(targets))) then
      call expect(-1, NUCE_OK, .false., what // ': parts in range')
      return
    end if
    weight = 0
    recount = 0
    do v = 1, n
      weight(part(v) + 1) = weight(part(v) + 1) + vwgt(v)
      do e = xadj(v), xadj(v + 1) - 1
        if (part(adjncy(e)) /= part(v)) recount = recount + ewgt(e)
      end do
    end do
    recount = recount / 2
    call expect(merge(NUCE_OK, -1, all(weight <= 1.03_dp * sum(vwgt) * targets / sum(targets) &
                + maxval(vwgt))), NUCE_OK, .false., what // ': part weights')
    call expect(merge(NUCE_OK, -1, abs(recount - cut) <= 1e-9_dp * max(cut, 1.0_dp)), NUCE_OK, &
                .false., what // ': edge cut recounted')
  end subroutine check_partition

  !> Rereads the slot buffer `values` and checks owned and ghost records
  !> (value_of + plus), the local adjacency and that the owned sets tile.
  subroutine check_layout(plus, when)
    real(dp), intent(in) :: plus
    character(len=*), intent(in) :: when
    integer(i8) :: owned, ghosts, arcs, k, e
    integer(i8), allocatable :: ids(:), gids(:), lx(:), la(:), global_of(:)
    real(dp), allocatable :: lw(:)
    integer, allocatable :: count(:)
    logical :: ok
    call nuce_graph_sizes(g, owned, ghosts, arcs, ierr)
    call expect(ierr, NUCE_OK, .false., 'graph_sizes ' // when)
    allocate (ids(owned), gids(ghosts), lx(owned + 1), la(arcs), lw(arcs), count(n), &
              global_of(owned + ghosts))
    call nuce_graph_owned(g, ids)
    call nuce_graph_ghosts(g, gids)
    count = 0
    count(ids) = 1
    call MPI_Allreduce(MPI_IN_PLACE, count, n, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD)
    call expect(merge(NUCE_OK, -1, all(count == 1)), NUCE_OK, .true., &
                'every vertex owned once ' // when)
    if (allocated(values)) deallocate (values)
    allocate (values(m, owned + ghosts))
    values = -1
    call nuce_graph_read(g, values, ierr)
    call expect(ierr, NUCE_OK, .false., 'graph_read ' // when)
    ok = .true.
    do k = 1, owned
      ok = ok .and. all(values(:, k) == value_of(int(ids(k)), plus))
    end do
    call expect(merge(NUCE_OK, -1, ok .and. all(values(:, owned + 1:) == -1)), NUCE_OK, .false., &
                'owned records, ghosts untouched ' // when)
    call nuce_graph_exchange_ghosts(g, values, ierr)
    call expect(ierr, NUCE_OK, .true., 'graph_exchange_ghosts ' // when)
    do k = 1, ghosts
      ok = ok .and. all(values(:, owned + k) == value_of(int(gids(k)), plus))
    end do
    call expect(merge(NUCE_OK, -1, ok), NUCE_OK, .false., 'ghost records ' // when)
    ! The local adjacency, slot by slot, is the global adjacency.
    call nuce_graph_adjacency(g, lx, la, lw, ierr)
    call expect(ierr, NUCE_OK, .false., 'graph_adjacency ' // when)
    global_of(1:owned) = ids
    global_of(owned + 1:) = gids
    ok = lx(1) == 1 .and. lx(owned + 1) == arcs + 1
    do k = 1, owned
      if (.not. ok) exit
      ok = lx(k + 1) - lx(k) == xadj(ids(k) + 1) - xadj(ids(k))
      if (.not. ok) exit
      e = xadj(ids(k))
      ok = all(global_of(la(lx(k):lx(k + 1) - 1)) == adjncy(e:e + lx(k + 1) - lx(k) - 1)) .and. &
           all(lw(lx(k):lx(k + 1) - 1) == ewgt(e:e + lx(k + 1) - lx(k) - 1))
    end do
    call expect(merge(NUCE_OK, -1, ok), NUCE_OK, .false., 'local adjacency ' // when)
  end subroutine check_layout

  !> This rank owns exactly the vertices v with part(v) == rank.
  subroutine check_owned_are(part, what)
    integer(i8), intent(in) :: part(:)
    character(len=*), intent(in) :: what
    integer(i8) :: owned, ghosts
    integer(i8), allocatable :: ids(:)
    integer :: v
    call nuce_graph_sizes(g, owned, ghosts)
    allocate (ids(owned))
    call nuce_graph_owned(g, ids)
    call expect(merge(NUCE_OK, -1, all(ids == pack([(int(v, i8), v = 1, n)], part == rank))), &
                NUCE_OK, .false., what)
  end subroutine check_owned_are

  !> The model makespan of a schedule, recomputed: max over the workers with
  !> tasks of (send position) tcom + count cycle + (slot from the end)
  !> tcom_return; -huge when the orders are not permutations of 1 .. p.
  real(dp) function makespan_of(t, tcom, tret, counts, send, ret) result(ms)
    real(dp), intent(in) :: t(:), tcom, tret
    integer(i8), intent(in) :: counts(:), send(:), ret(:)
    integer :: k, p
    integer :: s1(size(t)), s2(size(t))
    ms = -huge(ms)
    if (.not. (is_permutation(send) .and. is_permutation(ret))) return
    p = size(t)
    do k = 1, p
      s1(send(k)) = k
      s2(ret(k)) = p + 1 - k
    end do
    ms = 0
    do k = 1, p
      if (counts(k) > 0) ms = max(ms, s1(k) * tcom + counts(k) * t(k) + s2(k) * tret)
    end do
  end function makespan_of

  !> A permutation of 1 .. size(x).
  logical function is_permutation(x)
    integer(i8), intent(in) :: x(:)
    integer :: k
    is_permutation = all([(count(x == k) == 1, k = 1, size(x))])
  end function is_permutation

  !> MinTime and MaxTasks schedules, checked by recomputing their makespans.
  subroutine check_tasks()
    real(dp), parameter :: t(4) = [1.0_dp, 1.5_dp, 2.0_dp, 3.0_dp], tcom = 0.1_dp, tret = 0.05_dp
    integer(i8) :: counts(4), send(4), ret(4), counts2(4)
    real(dp) :: ms, ms2
    call nuce_tasks_min_time(t, tcom, tret, 20_i8, counts, send, ret, ms, ierr)
    call expect(ierr, NUCE_OK, .false., 'tasks_min_time')
    call expect(merge(NUCE_OK, -1, sum(counts) == 20 .and. is_permutation(send) .and. &
                is_permutation(ret) .and. abs(makespan_of(t, tcom, tret, counts, send, ret) - ms) &
                <= 1e-12_dp * ms), NUCE_OK, .false., 'tasks_min_time: 20 tasks, makespan recomputed')
    call nuce_tasks_max_tasks(t, tcom, tret, 10.0_dp, counts, send, ret, ms, ierr)
    call expect(ierr, NUCE_OK, .false., 'tasks_max_tasks')
    call expect(merge(NUCE_OK, -1, is_permutation(send) .and. is_permutation(ret) .and. &
                ms <= 10.0_dp .and. abs(makespan_of(t, tcom, tret, counts, send, ret) - ms) &
                <= 1e-12_dp * ms), NUCE_OK, .false., 'tasks_max_tasks: within the deadline, recomputed')
    ! MinTime of as many tasks fits the deadline too.
    call nuce_tasks_min_time(t, tcom, tret, sum(counts), counts2, send, ret, ms2, ierr)
    call expect(merge(NUCE_OK, -1, ierr == NUCE_OK .and. ms2 <= 10.0_dp * (1 + 1e-12_dp)), &
                NUCE_OK, .false., 'tasks_min_time(MaxTasks count) within the deadline')
    call nuce_tasks_min_time(t, tcom, tret, -1_i8, counts, send, ret, ierr=ierr)
    call expect_error(ierr, NUCE_ERR_INVALID_INPUT, .false., 'tasks_min_time(negative tasks)', &
                      'tasks is negative')
    call nuce_tasks_min_time(t, tcom, tret, 5_i8, counts(1:3), send, ret, ierr=ierr)
    call expect_error(ierr, NUCE_ERR_SHAPE_MISMATCH, .false., 'tasks_min_time(counts too short)', &
                      'one entry per worker')
    call nuce_tasks_max_tasks([1.0_dp, -1.0_dp, 1.0_dp, 1.0_dp], tcom, tret, 10.0_dp, counts, &
                              send, ret, ierr=ierr)
    call expect(merge(NUCE_OK, -1, ierr /= NUCE_OK), NUCE_OK, .false., &
                'tasks_max_tasks(negative cycle time) fails')
  end subroutine check_tasks

  !> AMR submeshes with both packers: in the mesh, non-empty, disjoint.
  subroutine check_amr()
    integer(i8) :: grids(2, 5), lo(2, 5), hi(2, 5)
    logical :: rotated(5), ok
    integer :: pk, i, j
    grids = reshape([64_i8, 32_i8, 32_i8, 32_i8, 16_i8, 48_i8, 40_i8, 20_i8, 24_i8, 24_i8], [2, 5])
    do pk = NUCE_PACK_TIGHT, NUCE_PACK_LEVEL
      call nuce_amr_allocate(grids, 4_i8, 4_i8, lo, hi, packer=pk, rotated=rotated, ierr=ierr)
      call expect(ierr, NUCE_OK, .false., 'amr_allocate')
      ok = all(lo >= 1) .and. all(hi <= 4) .and. all(lo <= hi)
      do i = 1, 5
        do j = i + 1, 5
          ok = ok .and. (any(hi(:, i) < lo(:, j)) .or. any(hi(:, j) < lo(:, i)))
        end do
      end do
      call expect(merge(NUCE_OK, -1, ok), NUCE_OK, .false., 'amr submeshes in the mesh, disjoint')
    end do
    grids(2, 3) = 0
    call nuce_amr_allocate(grids, 4_i8, 4_i8, lo, hi, ierr=ierr)
    call expect_error(ierr, NUCE_ERR_INVALID_INPUT, .false., 'amr_allocate(an empty grid)', &
                      'every grid size must be > 0')
    call nuce_amr_allocate(grids(:, 1:2), 4_i8, 4_i8, lo, hi, ierr=ierr)
    call expect_error(ierr, NUCE_ERR_SHAPE_MISMATCH, .false., 'amr_allocate(lo, hi of 5 for 2 grids)', &
                      'lo(2, m), hi(2, m)')
  end subroutine check_amr

end program graph
