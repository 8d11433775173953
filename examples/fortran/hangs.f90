! hangs.f90 — one rank departs from a collective call of the Fortran module;
! no rank may wait forever. Run under mpirun with NUCE_TIMEOUT_S set (e.g. 5):
!
!   mpirun -np 2 hangs CASE
!
! CASE (the departing rank is the last one):
!   unset-array  passes a never-created type(nuce_array) to nuce_maybe_remap:
!                the same code on every rank (expect/finish of checks.f90,
!                "hangs: all N checks passed on P ranks", exit 0)
!   skip-remap   the last rank skips nuce_maybe_remap and calls
!                nuce_array_gather: after the timeout every rank returns
!                NUCE_ERR_DISAGREEMENT naming both calls ("hangs: all N
!                checks passed on P ranks", exit 0)
program hangs
  use, intrinsic :: iso_c_binding, only: c_double, c_int64_t
  use mpi_f08
  use nuce
  use checks
  implicit none

  integer, parameter :: dp = c_double, i8 = c_int64_t
  integer(i8), parameter :: n1 = 48, n2 = 64
  integer :: rank, nranks, ierr
  integer(i8) :: lo(2), hi(2)
  character(len=32) :: which
  type(nuce_balancer) :: b
  type(nuce_array) :: a, unset
  real(dp), allocatable :: u(:, :), global(:, :)
  logical :: remapped, departs

  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call MPI_Comm_size(MPI_COMM_WORLD, nranks)
  call get_command_argument(1, which)
  departs = rank == nranks - 1

  call nuce_balancer_create(MPI_COMM_WORLD, b)
  call nuce_array_create(b, n1, n2, 1_i8, a)
  call nuce_array_box(a, rank, lo, hi)
  allocate (u(lo(1) - 1:hi(1) + 1, lo(2) - 1:hi(2) + 1))
  call nuce_array_read(a, u)
  if (rank == 0) then
    allocate (global(n1, n2))
  else
    allocate (global(0, 0))
  end if

  select case (trim(which))
  case ('unset-array')
    if (departs) then
      call nuce_maybe_remap(b, unset, 10_i8, u, remapped, ierr=ierr)
    else
      call nuce_maybe_remap(b, a, 10_i8, u, remapped, ierr=ierr)
    end if
    if (ierr /= NUCE_OK) write (*, '(a, i0, a, i0, a, a)') 'hangs: rank ', rank, &
      ': nuce_maybe_remap returned ', ierr, ': ', nuce_last_error()
    call expect_error(ierr, NUCE_ERR_INVALID_INPUT, .true., 'nuce_maybe_remap(unset array on the last rank)', &
                      'the array (in nuce_maybe_remap) is NULL')
    call nuce_array_free(a)
    call nuce_balancer_free(b)
    call finish('hangs')
  case ('skip-remap')
    if (departs) then
      call nuce_array_gather(a, u, global, ierr=ierr)
    else
      call nuce_maybe_remap(b, a, 10_i8, u, remapped, ierr=ierr)
    end if
    if (ierr /= NUCE_OK) write (*, '(a, i0, a, i0, a, a)') 'hangs: rank ', rank, &
      ': returned ', ierr, ': ', nuce_last_error()
    call expect_error(ierr, NUCE_ERR_DISAGREEMENT, .true., &
                      'nuce_maybe_remap against nuce_array_gather (the last rank skips the remap)', &
                      'nuce_array_gather (at another of nuce''s collectives)')
    call nuce_array_free(a)
    call nuce_balancer_free(b)
    call finish('hangs')
  case default
    if (rank == 0) write (*, '(a)') 'usage: hangs unset-array|skip-remap'
    call MPI_Finalize()
    error stop 2
  end select
end program hangs
