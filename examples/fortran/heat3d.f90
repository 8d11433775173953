! heat3d.f90 — the 3D heat-diffusion solver of examples/c/heat3d.c (7-point
! Jacobi, variable conductivity) in Fortran, on the program's own arrays,
! load-balanced by nuce's grid API (docs/fortran-api.md, "Grids on your own
! arrays (3D)").
!
! The nx x ny x nz grid is u(i, j, k), i fastest, global indices 1-based
! (plane i = 1 held at 1, a Gaussian bump inside, Dirichlet boundary); it is
! the C example's grid cell for cell (its cell (i-1, j-1, k-1)). Two fields,
! the temperature u and a conductivity kk, live in this program's
! allocatable arrays with one halo cell on each side:
!
!     allocate (u(lo(1) - 1:hi(1) + 1, lo(2) - 1:hi(2) + 1, lo(3) - 1:hi(3) + 1))
!
! nuce exchanges their ghosts in place (both in one call, begun before the
! interior update and ended before the shell), and when a remap pays off it
! moves them into new arrays this program allocates for its new box. At the
! end rank 0 gathers the grid (plain MPI) and compares it bit for bit with a
! serial solve; it prints a checksum (the bits of the sum of all cells, i
! slowest) that examples/c/heat3d.c prints too for the same grid.
!
! `--slowdown R:F@P[,...]` makes rank R really do F times the work from
! phase P on (nuce is not told: it measures).
!
! `--cost W` is heat3d.c's: every cell gets some "chemistry" (a loop that
! leaves the solution alone), W times as much in the band of i-planes
! nx/4 <= i - 1 < nx/2, and the program gives nuce_grid_set_cost the cost
! of each cell of its box, cost(lo(1):hi(1), lo(2):hi(2), lo(3):hi(3)), after
! creating the grid and again for the new box after each move. Rank 0 prints
! `heat3d: cost balance: max/mean M` (the largest summed cost over the mean).
!
!   cmake -S examples/fortran -B build -DCMAKE_PREFIX_PATH=$PREFIX && cmake --build build
!   mpirun -np 2 build/heat3d --nx 48 --ny 48 --nz 48 --phases 6 --iters 10 --slowdown 1:3@1
program heat3d
  use, intrinsic :: iso_c_binding, only: c_double, c_int64_t
  use, intrinsic :: iso_fortran_env, only: error_unit
  use mpi_f08
  use nuce
  implicit none

  integer, parameter :: dp = c_double, i8 = c_int64_t, max_slow = 16
  integer(i8), parameter :: pad(3) = [1_i8, 1_i8, 1_i8]
  integer(i8) :: n(3) = [24_i8, 20_i8, 18_i8], phases = 6, iters = 10
  integer :: slow(3, max_slow), nslow = 0 ! (rank, factor, phase) per item
  integer :: rank, nranks, remaps, factor, f, r, cost_w = 1
  real(dp) :: my_cost = 0, max_cost, sum_cost
  real(dp), volatile :: sink ! --cost: where the chemistry's results go
  integer(i8) :: phase, it, lo(3), hi(3), ilo(3), ihi(3), ahead, ncells
  logical :: remapped, ok, inner
  type(nuce_balancer) :: b
  type(nuce_grid) :: g
  type(nuce_exchange) :: x
  type(nuce_field) :: fields(2), old(2)
  real(dp), allocatable, target :: u(:, :, :), unew(:, :, :), kk(:, :, :)
  real(dp), allocatable, target :: nu(:, :, :), nk(:, :, :)
  real(dp), allocatable :: cells(:), all_cells(:), s(:, :, :), sk(:, :, :)
  integer(i8), allocatable :: boxes(:, :)
  integer, allocatable :: counts(:), displs(:)
  integer(i8) :: mine(6), differ, covered, i, j, k, c
  real(dp) :: total

  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call MPI_Comm_size(MPI_COMM_WORLD, nranks)
  call parse_args()

  call nuce_balancer_create(MPI_COMM_WORLD, b)
  call nuce_grid_create(b, n, 1_i8, NUCE_STENCIL_FACES, g)

  ! This rank's fields, in its own arrays.
  call nuce_grid_box(g, rank, lo, hi)
  call alloc_block(u, lo, hi)
  call alloc_block(unew, lo, hi)
  call alloc_block(kk, lo, hi)
  call fill(u, kk, lo, hi)
  if (cost_w > 1) call set_cost(lo, hi)

  remaps = 0
  do phase = 0, phases - 1
    factor = factor_at(int(phase))
    do it = 1, iters
      ! Both fields in one exchange; the interior (cells whose neighbours are
      ! all this rank's) is updated while the ghosts travel.
      fields = [nuce_grid_field(u, pad), nuce_grid_field(kk, pad)]
      call nuce_grid_exchange_begin(g, fields, x)
      ilo = lo + 1
      ihi = hi - 1
      inner = all(ihi >= ilo)
      do f = 1, factor ! a slowed rank really repeats its work
        if (inner) call sweep(u, unew, kk, lo, hi, ilo, ihi, .false.)
      end do
      call nuce_grid_exchange_end(x)
      do f = 1, factor
        call sweep(u, unew, kk, lo, hi, ilo, ihi, inner)
      end do
      call move_alloc(u, nu) ! swap u and unew (descriptors only)
      call move_alloc(unew, u)
      call move_alloc(nu, unew)
    end do
    ahead = iters * max(phases - phase - 1, 1_i8)
    call nuce_grid_maybe_remap(b, g, iters, remapped, ahead=ahead)
    if (remapped) then
      ! The new box: new arrays, filled by nuce from the old ones.
      call nuce_grid_box(g, rank, lo, hi)
      if (cost_w > 1) call set_cost(lo, hi) ! the new box's cost
      call alloc_block(nu, lo, hi)
      call alloc_block(nk, lo, hi)
      old = [nuce_grid_field(u, pad), nuce_grid_field(kk, pad)]
      fields = [nuce_grid_field(nu, pad), nuce_grid_field(nk, pad)]
      call nuce_grid_move(g, old, fields)
      call move_alloc(nu, u)
      call move_alloc(nk, kk)
      call alloc_block(unew, lo, hi)
      remaps = remaps + 1
    end if
    if (rank == 0) write (*, '(a, i0, a, i0, a, i0, a, i0, a)') 'heat3d: phase ', phase, ': box ', &
      max(hi(1) - lo(1) + 1, 0_i8), 'x', max(hi(2) - lo(2) + 1, 0_i8), 'x', &
      max(hi(3) - lo(3) + 1, 0_i8), trim(merge(' (remapped)', '           ', remapped))
  end do

  if (cost_w > 1) then
    call MPI_Reduce(my_cost, max_cost, 1, MPI_DOUBLE_PRECISION, MPI_MAX, 0, MPI_COMM_WORLD)
    call MPI_Reduce(my_cost, sum_cost, 1, MPI_DOUBLE_PRECISION, MPI_SUM, 0, MPI_COMM_WORLD)
    if (rank == 0) write (*, '(a, f0.3)') 'heat3d: cost balance: max/mean ', &
      max_cost * nranks / sum_cost
  end if

  ! Gather with plain MPI: every rank's box and cells (i fastest).
  mine = [lo, hi]
  ncells = product(max(hi - lo + 1, 0_i8))
  allocate (cells(max(ncells, 1_i8)))
  if (ncells > 0) cells(1:ncells) = reshape(u(lo(1):hi(1), lo(2):hi(2), lo(3):hi(3)), [ncells])
  allocate (boxes(6, nranks), counts(nranks), displs(nranks))
  call MPI_Gather(mine, 6, MPI_INTEGER8, boxes, 6, MPI_INTEGER8, 0, MPI_COMM_WORLD)
  displs = 0
  counts = 0
  do r = 1, nranks
    counts(r) = int(product(max(boxes(4:6, r) - boxes(1:3, r) + 1, 0_i8)))
    if (r > 1) displs(r) = displs(r - 1) + counts(r - 1)
  end do
  allocate (all_cells(max(sum(counts), 1)))
  call MPI_Gatherv(cells, int(ncells), MPI_DOUBLE_PRECISION, all_cells, counts, displs, &
                   MPI_DOUBLE_PRECISION, 0, MPI_COMM_WORLD)
  ok = .true.
  if (rank == 0) then
    call serial(s, sk, phases * iters)
    differ = 0
    covered = 0
    do r = 1, nranks
      c = displs(r)
      do k = boxes(3, r), boxes(6, r)
        do j = boxes(2, r), boxes(5, r)
          do i = boxes(1, r), boxes(4, r)
            c = c + 1
            covered = covered + 1
            if (transfer(all_cells(c), 0_i8) /= transfer(s(i, j, k), 0_i8)) differ = differ + 1
          end do
        end do
      end do
    end do
    ok = differ == 0 .and. covered == product(n)
    ! The checksum of examples/c/heat3d.c: the sum over the cells, i slowest.
    total = 0
    do i = 1, n(1)
      do j = 1, n(2)
        do k = 1, n(3)
          total = total + s(i, j, k)
        end do
      end do
    end do
    write (*, '(a, a, a, i0, a, i0, a, i0, a, i0, a, i0, a, i0, a)') 'heat3d: nuce ', &
      nuce_version(), ', ', nranks, ' ranks, ', n(1), 'x', n(2), 'x', n(3), ', ', phases, &
      ' phases of ', iters, ' iterations'
    write (*, '(a, i0)') 'heat3d: remaps: ', remaps
    write (*, '(a, z16.16)') 'heat3d: checksum: ', transfer(total, 0_i8)
    if (ok) then
      write (*, '(a)') 'heat3d: serial check: identical'
    else
      write (*, '(a, i0, a, i0, a)') 'heat3d: serial check: FAILED (', differ, ' of ', covered, &
        ' cells differ)'
    end if
  end if
  call MPI_Bcast(ok, 1, MPI_LOGICAL, 0, MPI_COMM_WORLD)
  call nuce_grid_free(g)
  call nuce_balancer_free(b)
  call MPI_Finalize()
  if (.not. ok) error stop 1

contains

  !> --cost: the cost of the cells of plane i, W in the band and 1 elsewhere.
  integer function weight(i)
    integer(i8), intent(in) :: i
    weight = 1
    if (i - 1 >= n(1) / 4 .and. i - 1 < n(1) / 2) weight = cost_w
  end function weight

  !> Tells nuce the cost of each cell of the box lo..hi (no halo): a cost
  !> belongs to the box it was set for and does not follow a move.
  subroutine set_cost(lo, hi)
    integer(i8), intent(in) :: lo(3), hi(3)
    real(dp), allocatable :: cost(:, :, :)
    integer(i8) :: i
    allocate (cost(lo(1):hi(1), lo(2):hi(2), lo(3):hi(3)))
    do i = lo(1), hi(1)
      cost(i, :, :) = weight(i)
    end do
    call nuce_grid_set_cost(g, cost)
    my_cost = sum(cost)
  end subroutine set_cost

  !> --cost: a cell's chemistry, 64·w dependent multiply-adds from its value.
  subroutine chemistry(x0, w)
    real(dp), intent(in) :: x0
    integer, intent(in) :: w
    real(dp) :: x
    integer :: r
    x = x0
    do r = 1, 64 * w
      x = x * 0.999_dp + 0.001_dp
    end do
    sink = x
  end subroutine chemistry

  !> Allocates (afresh) a block for the box lo..hi with its halo, zeroed.
  subroutine alloc_block(a, lo, hi)
    real(dp), allocatable, intent(inout) :: a(:, :, :)
    integer(i8), intent(in) :: lo(3), hi(3)
    if (allocated(a)) deallocate (a)
    allocate (a(lo(1) - pad(1):hi(1) + pad(1), lo(2) - pad(2):hi(2) + pad(2), &
                lo(3) - pad(3):hi(3) + pad(3)))
    a = 0
  end subroutine alloc_block

  !> The initial temperature of global cell (i, j, k), 1-based.
  pure function initial(i, j, k) result(v)
    integer(i8), intent(in) :: i, j, k
    real(dp) :: v, dx, dy, dz
    if (i == 1) then
      v = 1
      return
    end if
    dx = real(i - 1, dp) / real(n(1), dp) - 0.6_dp
    dy = real(j - 1, dp) / real(n(2), dp) - 0.4_dp
    dz = real(k - 1, dp) / real(n(3), dp) - 0.5_dp
    v = 0.5_dp * exp(-(dx * dx + dy * dy + dz * dz) * 30.0_dp)
  end function initial

  !> The conductivity of global cell (i, j, k), 1-based.
  pure function conductivity(i, j, k) result(v)
    integer(i8), intent(in) :: i, j, k
    real(dp) :: v
    v = 0.05_dp + 0.02_dp * real(mod((i - 1) * 7 + (j - 1) * 3 + (k - 1), 5_i8), dp)
  end function conductivity

  !> Fills the cells lo..hi of both fields with their initial values.
  subroutine fill(u, kk, lo, hi)
    integer(i8), intent(in) :: lo(3), hi(3)
    real(dp), intent(inout) :: u(lo(1) - 1:, lo(2) - 1:, lo(3) - 1:)
    real(dp), intent(inout) :: kk(lo(1) - 1:, lo(2) - 1:, lo(3) - 1:)
    integer(i8) :: i, j, k
    do k = lo(3), hi(3)
      do j = lo(2), hi(2)
        do i = lo(1), hi(1)
          u(i, j, k) = initial(i, j, k)
          kk(i, j, k) = conductivity(i, j, k)
        end do
      end do
    end do
  end subroutine fill

  !> Updates the cells lo..hi of the block from u into unew; with `skip`,
  !> all but the inner box ilo..ihi, else only the inner box. Global
  !> boundary cells keep their value.
  subroutine sweep(u, unew, kk, lo, hi, ilo, ihi, skip)
    integer(i8), intent(in) :: lo(3), hi(3), ilo(3), ihi(3)
    real(dp), intent(in) :: u(lo(1) - 1:, lo(2) - 1:, lo(3) - 1:)
    real(dp), intent(inout) :: unew(lo(1) - 1:, lo(2) - 1:, lo(3) - 1:)
    real(dp), intent(in) :: kk(lo(1) - 1:, lo(2) - 1:, lo(3) - 1:)
    logical, intent(in) :: skip
    integer(i8) :: a(3), b(3), i, j, k
    real(dp) :: flux, c
    if (skip .or. .not. all(ihi >= ilo)) then
      a = lo
      b = hi
    else
      a = ilo
      b = ihi
    end if
    do k = a(3), b(3)
      do j = a(2), b(2)
        do i = a(1), b(1)
          if (skip) then
            if (all([i, j, k] >= ilo .and. [i, j, k] <= ihi)) cycle
          end if
          if (cost_w > 1) call chemistry(u(i, j, k), weight(i)) ! an expensive cell costs more
          if (i == 1 .or. j == 1 .or. k == 1 .or. i == n(1) .or. j == n(2) .or. k == n(3)) then
            unew(i, j, k) = u(i, j, k)
            cycle
          end if
          ! The C example's order: axis x (i), then y (j), then z (k).
          c = kk(i, j, k)
          flux = 0
          flux = flux + 0.5_dp * (c + kk(i - 1, j, k)) * (u(i - 1, j, k) - u(i, j, k))
          flux = flux + 0.5_dp * (c + kk(i + 1, j, k)) * (u(i + 1, j, k) - u(i, j, k))
          flux = flux + 0.5_dp * (c + kk(i, j - 1, k)) * (u(i, j - 1, k) - u(i, j, k))
          flux = flux + 0.5_dp * (c + kk(i, j + 1, k)) * (u(i, j + 1, k) - u(i, j, k))
          flux = flux + 0.5_dp * (c + kk(i, j, k - 1)) * (u(i, j, k - 1) - u(i, j, k))
          flux = flux + 0.5_dp * (c + kk(i, j, k + 1)) * (u(i, j, k + 1) - u(i, j, k))
          unew(i, j, k) = u(i, j, k) + flux
        end do
      end do
    end do
  end subroutine sweep

  !> The serial solve of the whole grid (one block, no neighbours).
  subroutine serial(s, sk, steps)
    real(dp), allocatable, intent(out) :: s(:, :, :), sk(:, :, :)
    integer(i8), intent(in) :: steps
    real(dp), allocatable :: snew(:, :, :), tmp(:, :, :)
    integer(i8) :: t, one(3)
    one = 1
    call alloc_block(s, one, n)
    call alloc_block(snew, one, n)
    call alloc_block(sk, one, n)
    call fill(s, sk, one, n)
    do t = 1, steps
      call sweep(s, snew, sk, one, n, one, n, .false.)
      call move_alloc(s, tmp)
      call move_alloc(snew, s)
      call move_alloc(tmp, snew)
    end do
  end subroutine serial

  !> This rank's work factor in phase `p` (--slowdown): its item with the
  !> latest start phase <= p (the first of equals), 1 without one.
  integer function factor_at(p)
    integer, intent(in) :: p
    integer :: i
    i = maxloc(slow(3, 1:nslow), 1, mask=slow(1, 1:nslow) == rank .and. slow(3, 1:nslow) <= p)
    factor_at = 1
    if (i > 0) factor_at = max(slow(2, i), 1)
  end function factor_at

  subroutine parse_args()
    character(len=256) :: arg, val
    integer :: i, nargs, stat
    nargs = command_argument_count()
    i = 1
    do while (i <= nargs)
      call get_command_argument(i, arg)
      val = ''
      if (i < nargs) call get_command_argument(i + 1, val)
      stat = 0
      select case (trim(arg))
      case ('--nx')
        read (val, *, iostat=stat) n(1)
      case ('--ny')
        read (val, *, iostat=stat) n(2)
      case ('--nz')
        read (val, *, iostat=stat) n(3)
      case ('--phases')
        read (val, *, iostat=stat) phases
      case ('--iters')
        read (val, *, iostat=stat) iters
      case ('--slowdown')
        call parse_slowdown(trim(val), stat)
      case ('--cost')
        read (val, *, iostat=stat) cost_w
      case default
        stat = 1
      end select
      if (stat /= 0) call usage(trim(arg) // ' ' // trim(val))
      i = i + 2
    end do
    if (any(n < 1) .or. phases < 1 .or. iters < 1 .or. cost_w < 1) call usage('sizes must be >= 1')
  end subroutine parse_args

  !> Items R:F@P separated by commas (P defaults to 0): each item is read
  !> list-directed once its ':' and '@' are blanks.
  subroutine parse_slowdown(spec, stat)
    character(len=*), intent(in) :: spec
    integer, intent(out) :: stat
    character(len=len(spec) + 1) :: item
    integer :: start, comma, p
    logical :: at
    stat = 0
    start = 1
    do while (start <= len(spec) .and. stat == 0)
      comma = index(spec(start:), ',')
      if (comma == 0) comma = len(spec) - start + 2
      item = spec(start:start + comma - 2)
      start = start + comma
      if (nslow == max_slow .or. index(item, ':') == 0) then
        stat = 1
        return
      end if
      at = index(item, '@') > 0
      do p = 1, len(item)
        if (item(p:p) == ':' .or. item(p:p) == '@') item(p:p) = ' '
      end do
      nslow = nslow + 1
      slow(:, nslow) = [0, 1, 0]
      read (item, *, iostat=stat) slow(1, nslow), slow(2, nslow)
      if (stat == 0 .and. at) &
        read (item, *, iostat=stat) slow(1, nslow), slow(2, nslow), slow(3, nslow)
    end do
  end subroutine parse_slowdown

  subroutine usage(what)
    character(len=*), intent(in) :: what
    if (rank == 0) write (error_unit, '(a, a, a)') 'heat3d: bad argument: ', what, &
      ' (usage: --nx N --ny N --nz N --phases N --iters N --slowdown R:F@P[,...] --cost W)'
    call MPI_Finalize()
    stop 2
  end subroutine usage

end program heat3d
