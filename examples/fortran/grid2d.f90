! grid2d.f90: the Fortran twin of examples/c/grid2d.c — a 2D Jacobi solver on the
! program's own arrays with the grid API (docs/fortran-api.md, "Grids on your own
! arrays"): n = [nx, ny, 1] with pad(3) = 0; two fields (the solution, real(8), and
! each cell's global id, integer(4) through c_loc) exchanged together; the last rank
! repeats its sweep 3 times; after a remap both move into new arrays. Rank 0's
! initial grid is scattered into u (nuce_grid_scatter) and the result gathered
! back (nuce_grid_gather). Checks the face ghosts' ids after each exchange and the
! gathered result against a serial solve, bit for bit.
! Prints "grid2d: ok" and exits 0, or aborts non-zero.
program grid2d
  use mpi
  use nuce
  use iso_c_binding
  implicit none
  integer, parameter :: dp = c_double, i8 = c_int64_t
  integer(i8), parameter :: nx = 301, ny = 201
  integer(i8) :: n(3), lo(3), hi(3), nlo(3), nhi(3), pad(3)
  type(nuce_balancer) :: b
  type(nuce_grid) :: g
  real(dp), allocatable, target :: u(:,:,:), v(:,:,:), nu(:,:,:)
  integer(c_int32_t), allocatable, target :: tg(:,:,:), ntg(:,:,:)
  type(nuce_field) :: f(2), of(2), nf(2)
  integer :: ierr, rank, nranks, ph, it, r, reps, remaps
  integer(i8) :: i, j
  logical :: remapped
  integer :: differ
  real(dp), allocatable :: a(:,:), c(:,:), res(:,:)

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nranks, ierr)
  call nuce_balancer_create(MPI_COMM_WORLD, b)
  call nuce_measure(b)
  n = [nx, ny, 1_i8]
  pad = [1_i8, 1_i8, 0_i8]
  call nuce_grid_create(b, n, 1_i8, NUCE_STENCIL_FACES, g)
  call nuce_grid_box(g, rank, lo, hi)
  call alloc(lo, hi)
  do j = lo(2), hi(2)
    do i = lo(1), hi(1)
      tg(i, j, 1) = int(i + nx*j, c_int32_t)
    end do
  end do
  ! rank 0's initial grid, scattered into every rank's u (zero-size elsewhere)
  if (rank == 0) then
    allocate (a(nx, ny))
    do j = 1, ny
      do i = 1, nx
        a(i, j) = real(mod(i + 2*j, 7_i8), dp)
      end do
    end do
  else
    allocate (a(0, 0))
  end if
  call nuce_grid_scatter(g, a, nuce_grid_field(u, pad))
  remaps = 0
  do ph = 1, 4
    do it = 1, 20
      f = [nuce_grid_field(u, pad), nuce_grid_field(c_loc(tg), 4_c_size_t, pad)]
      call nuce_grid_exchange(g, f)
      ! ghost ids on faces
      do j = lo(2), hi(2)
        if (lo(1) > 1) call chk(lo(1) - 1, j)
        if (hi(1) < nx) call chk(hi(1) + 1, j)
      end do
      do i = lo(1), hi(1)
        if (lo(2) > 1) call chk(i, lo(2) - 1)
        if (hi(2) < ny) call chk(i, hi(2) + 1)
      end do
      reps = 1
      if (rank == nranks - 1 .and. nranks > 1) reps = 3
      do r = 1, reps
        do j = lo(2), hi(2)
          do i = lo(1), hi(1)
            if (i == 1 .or. j == 1 .or. i == nx .or. j == ny) then
              v(i, j, 1) = u(i, j, 1)
            else
              v(i, j, 1) = 0.25_dp*(u(i-1, j, 1) + u(i+1, j, 1) + u(i, j-1, 1) + u(i, j+1, 1))
            end if
          end do
        end do
      end do
      call move_alloc(u, nu); call move_alloc(v, u); call move_alloc(nu, v)
    end do
    call nuce_grid_maybe_remap(b, g, 20_i8, remapped)
    if (remapped) then
      remaps = remaps + 1
      call nuce_grid_box(g, rank, nlo, nhi)
      allocate (nu(nlo(1)-1:nhi(1)+1, nlo(2)-1:nhi(2)+1, nlo(3):nhi(3)))
      allocate (ntg(nlo(1)-1:nhi(1)+1, nlo(2)-1:nhi(2)+1, nlo(3):nhi(3)))
      of = [nuce_grid_field(u, pad), nuce_grid_field(c_loc(tg), 4_c_size_t, pad)]
      nf = [nuce_grid_field(nu, pad), nuce_grid_field(c_loc(ntg), 4_c_size_t, pad)]
      call nuce_grid_move(g, of, nf)
      call move_alloc(nu, u); call move_alloc(ntg, tg)
      deallocate (v); allocate (v(nlo(1)-1:nhi(1)+1, nlo(2)-1:nhi(2)+1, nlo(3):nhi(3)))
      lo = nlo; hi = nhi
    end if
    if (rank == 0) print '(a,i0,a,l1,a,i0,a,i0)', 'grid2d: phase ', ph, ': remapped ', remapped, &
        ' box ', hi(1) - lo(1) + 1, ' x ', hi(2) - lo(2) + 1
  end do
  ! the result, gathered on rank 0
  if (rank == 0) then
    allocate (res(nx, ny))
  else
    allocate (res(0, 0))
  end if
  call nuce_grid_gather(g, nuce_grid_field(u, pad), res)
  if (rank == 0) then
    allocate (c(nx, ny))
    do it = 1, 80
      c = a
      do j = 2, ny - 1
        do i = 2, nx - 1
          c(i, j) = 0.25_dp*(a(i-1, j) + a(i+1, j) + a(i, j-1) + a(i, j+1))
        end do
      end do
      a = c
    end do
    differ = count(res /= a)
    print '(a,i0,a,i0,a,i0)', 'grid2d: remaps ', remaps, ', cells differing from the serial solve: ', &
        differ, ' of ', nx*ny
    if (differ /= 0) then
      print '(a)', 'grid2d: FAILED: the result differs from the serial solve'
      call MPI_Abort(MPI_COMM_WORLD, 3, ierr)
    end if
    print '(a)', 'grid2d: ok'
  end if
  call nuce_grid_free(g)
  call nuce_balancer_free(b)
  call MPI_Finalize(ierr)
contains
  subroutine alloc(lo, hi)
    integer(i8), intent(in) :: lo(3), hi(3)
    allocate (u(lo(1)-1:hi(1)+1, lo(2)-1:hi(2)+1, lo(3):hi(3)))
    allocate (v(lo(1)-1:hi(1)+1, lo(2)-1:hi(2)+1, lo(3):hi(3)))
    allocate (tg(lo(1)-1:hi(1)+1, lo(2)-1:hi(2)+1, lo(3):hi(3)))
    u = 0; v = 0; tg = -1
  end subroutine alloc
  subroutine chk(i, j)
    integer(i8), intent(in) :: i, j
    if (tg(i, j, 1) /= int(i + nx*j, c_int32_t)) then
      print *, 'grid2d: FAILED: rank', rank, 'bad ghost', i, j, tg(i, j, 1)
      call MPI_Abort(MPI_COMM_WORLD, 2, ierr)
    end if
  end subroutine chk
end program grid2d
