! rows1d.f90 — a 1D distribution with nuce_plan_1d: the rows of a dense
! n x n matrix-vector product y = A x, split for the measured speeds within
! a memory limit read from the machine (nuce_set_memory_limit_from_machine).
! Rank r owns rows counts(1:r) summed + 1 to counts(1:r + 1) summed, builds
! them itself (A(i, j) = 1 / (i + j - 1), x(j) = j), computes its entries of
! y, and MPI_Allgatherv assembles y on every rank. Rank 0 compares every
! entry's bits with a serial product and prints
! "rows1d: serial check: identical", the limit and the counts. Usage:
!   mpirun -np 3 rows1d [n]      (n rows, default 2000; n >= ranks)
program rows1d
  use, intrinsic :: iso_c_binding, only: c_double, c_int64_t
  use mpi_f08
  use nuce
  implicit none
  integer, parameter :: dp = c_double, i8 = c_int64_t
  type(nuce_balancer) :: b
  integer :: rank, nranks, r
  integer(i8) :: n, cells, first, last, i, j
  integer(i8), allocatable :: counts(:)
  real(dp), allocatable :: a(:, :), x(:), mine(:), y(:)
  real(dp) :: s
  logical :: same
  character(len=32) :: arg

  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call MPI_Comm_size(MPI_COMM_WORLD, nranks)
  n = 2000
  if (command_argument_count() >= 1) then
    call get_command_argument(1, arg)
    read (arg, *) n
  end if

  call nuce_balancer_create(MPI_COMM_WORLD, b)
  call nuce_measure(b)
  ! A unit is a row of A and its entries of x and y: (n + 2) doubles; the
  ! rows may use 40 % of this rank's share of its machine's memory.
  call nuce_set_memory_limit_from_machine(b, 8 * real(n + 2, dp), 0.4_dp, cells)
  allocate (counts(nranks))
  call nuce_plan_1d(b, n, counts)
  first = sum(counts(1:rank)) + 1
  last = first + counts(rank + 1) - 1

  allocate (a(first:last, n), x(n), mine(first:last), y(n))
  x = [(real(j, dp), j = 1, n)]
  do j = 1, n
    do i = first, last
      a(i, j) = 1 / real(i + j - 1, dp)
    end do
  end do
  mine = 0
  do j = 1, n
    do i = first, last
      mine(i) = mine(i) + a(i, j) * x(j)
    end do
  end do
  call MPI_Allgatherv(mine, int(counts(rank + 1)), MPI_DOUBLE_PRECISION, y, int(counts), &
                      [(int(sum(counts(1:r))), r = 0, nranks - 1)], MPI_DOUBLE_PRECISION, &
                      MPI_COMM_WORLD)

  same = .true.
  if (rank == 0) then
    do i = 1, n
      s = 0
      do j = 1, n
        s = s + 1 / real(i + j - 1, dp) * x(j)
      end do
      same = same .and. transfer(s, 0_i8) == transfer(y(i), 0_i8)
    end do
    if (same) then
      print '(a)', 'rows1d: serial check: identical'
    else
      print '(a)', 'rows1d: serial check: DIFFERENT'
    end if
    print '(a, i0, a)', 'rows1d: memory limit: ', cells, ' rows (rank 0)'
    print '(a, *(i0, :, " "))', 'rows1d: counts: ', counts
  end if
  if (counts(rank + 1) > cells) then
    print '(a, i0, a, i0, a, i0)', 'rows1d: rank ', rank, ': ', counts(rank + 1), &
      ' rows over its limit of ', cells
    error stop 1
  end if
  call nuce_balancer_free(b)
  call MPI_Finalize()
  if (.not. same) error stop 1
end program rows1d
