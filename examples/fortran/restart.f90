! restart.f90: the Fortran twin of examples/c/restart.c — a 2D Jacobi solver on
! the program's own arrays whose ranks change while it runs (docs/fortran-api.md,
! "Save, restart, and ranks that leave or join"):
!
!   mpirun -np P restart_f STEPS                 run STEPS sweeps
!   mpirun -np P restart_f STEPS SAVE_AT FILE    ... and save after sweep SAVE_AT
!   mpirun -np Q restart_f STEPS --resume FILE   resume from FILE up to STEPS
!   mpirun -np P restart_f STEPS --leave R AT    rank R leaves after sweep AT
!   mpirun -np P restart_f STEPS --leave-signal R AT   the same, told by a SIGUSR1
!                                                that every rank catches as its leave
!                                                notice (nuce_catch_leave_signal)
!   mpirun -np P restart_f STEPS --join K AT     the last K ranks wait in a standby
!                                                pool and join after sweep AT
!
! Prints "restart: steps S ranks P hash H", H an XOR over every cell of its bits
! and global index (independent of the decomposition): a resumed run, or one a
! rank left or ranks joined, prints the H of a run that never changed. A leaving rank prints
! "restart: rank R released".
program restart_f
  use mpi_f08
  use nuce
  use iso_c_binding
  implicit none
  integer, parameter :: dp = c_double, i8 = c_int64_t
  integer(i8), parameter :: nx = 70, ny = 90
  integer(i8) :: n(3), lo(3), hi(3), pad(3), steps, step, save_at, leave_at, h, total
  integer(i8), allocatable :: user(:)
  type(nuce_balancer) :: b
  type(nuce_grid) :: g
  type(nuce_saved) :: s
  type(nuce_pool) :: pool
  type(nuce_grid), allocatable :: gs(:)
  type(MPI_Comm) :: comm, grown
  real(dp), allocatable, target :: u(:,:,:), v(:,:,:), t(:,:,:)
  real(dp), allocatable :: speeds(:)
  type(nuce_field) :: f(1), nf(1)
  integer :: rank, me, ranks, leave_rank, nleaving, nargs, size, join_count
  integer(i8) :: i, j, join_at
  logical :: resume, released, standby, joined, by_signal
  character(len=256) :: arg, file

  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  comm = MPI_COMM_WORLD
  me = rank
  nargs = command_argument_count()
  call get_command_argument(1, arg); read (arg, *) steps
  save_at = -1; leave_at = -1; leave_rank = -1; resume = .false.; file = ''; by_signal = .false.
  join_at = -1; join_count = 0; standby = .false.
  if (nargs >= 3) then
    call get_command_argument(2, arg)
    if (arg == '--resume') then
      resume = .true.
      call get_command_argument(3, file)
    else if (arg == '--leave' .or. arg == '--leave-signal') then
      by_signal = arg == '--leave-signal'
      if (by_signal) call nuce_catch_leave_signal('SIGUSR1')  ! a preemption notice
      call get_command_argument(3, arg); read (arg, *) leave_rank
      call get_command_argument(4, arg); read (arg, *) leave_at
    else if (arg == '--join') then
      call get_command_argument(3, arg); read (arg, *) join_count
      call get_command_argument(4, arg); read (arg, *) join_at
    else
      read (arg, *) save_at
      call get_command_argument(3, file)
    end if
  end if
  pad = [1_i8, 1_i8, 0_i8]
  step = 0
  if (join_count > 0) then
    ! The last join_count ranks wait in the pool; the others run.
    call MPI_Comm_size(MPI_COMM_WORLD, size)
    standby = rank >= size - join_count
    call nuce_pool_create(MPI_COMM_WORLD, standby, comm, pool)
  end if
  if (standby) then
    call nuce_pool_wait(pool, joined, comm, b, gs)
    if (.not. joined) then
      call nuce_pool_free(pool)
      call MPI_Finalize()
      stop
    end if
    g = gs(1)
    call MPI_Comm_rank(comm, me)
    call nuce_grid_box(g, me, lo, hi)          ! this rank's first cells
    call alloc(u); call alloc(v)
    f = [nuce_grid_field(c_null_ptr, 8_c_size_t, pad)]
    nf = [nuce_grid_field(u, pad)]
    call nuce_grid_move(g, f, nf)
    call MPI_Bcast(step, 1, MPI_INTEGER8, 0, comm)  ! the application's state
  else
    if (join_count > 0) call MPI_Comm_rank(comm, me)
    call nuce_balancer_create(comm, b)
    if (resume) then
      call nuce_saved_open(b, trim(file), s)
      ! On as many ranks as saved, nuce_saved_grid_create starts from the
      ! saved speeds when none were measured; on another number, measure.
      call nuce_saved_speeds(s, speeds)
      call MPI_Comm_size(comm, ranks)
      if (ubound(speeds, 1) /= ranks) then
        call nuce_measure(b)
      else if (me == 0) then
        print '(a, i0, a)', 'restart: saved speeds of ', ranks, ' ranks, used'
      end if
      call nuce_saved_user(s, user)
      step = user(1)
      call nuce_saved_grid_create(s, b, g)     ! planned for this run's ranks and speeds
    else
      n = [nx, ny, 1_i8]
      call nuce_measure(b)
      call nuce_grid_create(b, n, 1_i8, NUCE_STENCIL_FACES, g)
    end if
    call nuce_grid_box(g, me, lo, hi)
    call alloc(u); call alloc(v)
    if (resume) then
      f = [nuce_grid_field(u, pad)]
      call nuce_saved_read(s, g, f)
      call nuce_saved_free(s)
    else
      do j = lo(2), hi(2)
        do i = lo(1), hi(1)
          if (i == 1 .or. j == 1) then
            u(i, j, 1) = 1.0_dp
          else
            u(i, j, 1) = real(mod((j - 1)*7 + (i - 1)*3, 11_i8), dp) / 11.0_dp
          end if
        end do
      end do
    end if
  end if
  do while (step < steps)
    f = [nuce_grid_field(u, pad)]
    call nuce_grid_exchange(g, f)
    do j = lo(2), hi(2)
      do i = lo(1), hi(1)
        if (i == 1 .or. j == 1 .or. i == nx .or. j == ny) then
          v(i, j, 1) = u(i, j, 1)
        else
          v(i, j, 1) = 0.25_dp*(u(i-1, j, 1) + u(i+1, j, 1) + u(i, j-1, 1) + u(i, j+1, 1))
        end if
      end do
    end do
    call move_alloc(u, t); call move_alloc(v, u); call move_alloc(t, v)
    step = step + 1
    if (step == save_at) then
      f = [nuce_grid_field(u, pad)]
      call nuce_grid_checkpoint(b, g, trim(file), f, [step])
    end if
    if (step == leave_at) then
      ! The notice arrives (GNU Fortran's kill; 10 is SIGUSR1 on Linux).
      if (by_signal .and. rank == leave_rank) call kill(getpid(), 10)
      call nuce_depart(b, .not. by_signal .and. rank == leave_rank, nleaving)
      call nuce_grid_depart(b, g)              ! a move is pending
      call move_to_new_box()                   ! the new box: empty when leaving
      call nuce_depart_finish(b, [g], comm, released)
      if (released) then
        print '(a, i0, a)', 'restart: rank ', rank, ' released'
        call nuce_grid_free(g)
        call nuce_balancer_free(b)
        call MPI_Finalize()
        stop
      end if
      call MPI_Comm_rank(comm, me)
      call nuce_grid_box(g, me, lo, hi)        ! the same box, in the new numbering
    end if
    if (step == join_at) then
      call nuce_pool_admit(pool, b, join_count, [g], grown)  ! a move is pending
      call MPI_Comm_free(comm)
      comm = grown
      call MPI_Comm_rank(comm, me)
      call move_to_new_box()
      call MPI_Bcast(step, 1, MPI_INTEGER8, 0, comm)  ! what the new ranks need
    end if
  end do
  h = 0
  do j = lo(2), hi(2)
    do i = lo(1), hi(1)
      h = ieor(h, ieor(transfer(u(i, j, 1), 0_i8), ishftc((j - 1)*nx + i - 1, 21)))
    end do
  end do
  call MPI_Allreduce(h, total, 1, MPI_INTEGER8, MPI_BXOR, comm)
  call MPI_Comm_size(comm, ranks)
  if (me == 0) print '(a, i0, a, i0, a, z16.16)', 'restart: steps ', steps, ' ranks ', ranks, ' hash ', total
  if (join_count > 0) then
    call nuce_pool_release(pool, b)
    call nuce_pool_free(pool)
  end if
  call nuce_grid_free(g)
  call nuce_balancer_free(b)
  if (comm /= MPI_COMM_WORLD) call MPI_Comm_free(comm)
  call MPI_Finalize()

contains

  !> Completes g's pending move: u into an array for this rank's new box.
  subroutine move_to_new_box()
    call nuce_grid_box(g, me, lo, hi)
    call alloc(t)
    f = [nuce_grid_field(u, pad)]
    nf = [nuce_grid_field(t, pad)]
    call nuce_grid_move(g, f, nf)
    call move_alloc(t, u)
    call alloc(v)
  end subroutine move_to_new_box

  subroutine alloc(a)
    real(dp), allocatable, intent(out) :: a(:,:,:)
    allocate (a(lo(1)-1:hi(1)+1, lo(2)-1:hi(2)+1, lo(3):hi(3)))
    a = 0.0_dp
  end subroutine alloc

end program restart_f
