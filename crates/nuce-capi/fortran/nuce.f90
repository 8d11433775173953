! nuce.f90 — the Fortran 2008 interface of nuce (module `nuce`), over the C
! API of libnuce (nuce.h; reference: docs/fortran-api.md).
!
! Arrays are seen in Fortran order. A global n1 x n2 array `g(n1, n2)` is the
! C API's row-major `rows = n2` x `cols = n1` array, so the two describe the
! same memory. A rank's block is given as global index bounds `lo(2)`,
! `hi(2)` (1-based, inclusive) and the application allocates its padded block
! with them:
!
!     allocate (u(lo(1) - g:hi(1) + g, lo(2) - g:hi(2) + g))
!
! which is exactly the C API's padded row-major block, ghost border of width
! `g` included. Elements are real(c_double).
!
! Every procedure takes an optional last argument `ierr` (NUCE_OK or one of
! the NUCE_ERR_* codes, the same on every rank for a collective call). When
! `ierr` is absent and the call fails, the message is written to the error
! unit and the program stops with `error stop` (on every rank, since the
! code agrees), the way MPI's default error handler ends a job.
!
! Communicators: `type(MPI_Comm)` (mpi_f08) or an integer handle (mpi, mpif.h);
! nuce duplicates it and never frees it; it never initialises nor finalises MPI.
module nuce
  use, intrinsic :: iso_c_binding
  use, intrinsic :: iso_fortran_env, only: error_unit
  use mpi_f08, only: MPI_Comm
  implicit none
  private

  public :: nuce_balancer, nuce_array
  public :: nuce_version, nuce_last_error
  public :: nuce_balancer_create, nuce_balancer_free, nuce_measure, nuce_set_speeds, nuce_speeds
  public :: nuce_plan, nuce_plan_box, nuce_record_phase
  public :: nuce_array_create, nuce_array_scatter, nuce_array_free, nuce_array_box
  public :: nuce_array_read, nuce_array_exchange_ghosts, nuce_array_gather, nuce_maybe_remap
  public :: nuce_set_decomposer, nuce_set_hysteresis, nuce_set_timeout
  public :: nuce_waiting_begin, nuce_waiting_end

  ! The codes of nuce.h (a test checks that they agree).
  integer, parameter, public :: NUCE_OK = 0
  integer, parameter, public :: NUCE_ERR_INVALID_SPEED = 1
  integer, parameter, public :: NUCE_ERR_EMPTY = 2
  integer, parameter, public :: NUCE_ERR_SHAPE_MISMATCH = 3
  integer, parameter, public :: NUCE_ERR_TOO_MANY_PARTS = 4
  integer, parameter, public :: NUCE_ERR_INVALID_PLAN = 5
  integer, parameter, public :: NUCE_ERR_INVALID_INPUT = 6
  integer, parameter, public :: NUCE_ERR_PARSE = 7
  integer, parameter, public :: NUCE_ERR_IO = 8
  integer, parameter, public :: NUCE_ERR_SOLVER = 9
  integer, parameter, public :: NUCE_ERR_BAD_MESSAGE = 10
  integer, parameter, public :: NUCE_ERR_TIMEOUT = 11
  integer, parameter, public :: NUCE_ERR_PANIC = 12
  integer, parameter, public :: NUCE_ERR_UNKNOWN = 13

  !> A load balancer (wraps `nuce_balancer *`).
  type :: nuce_balancer
    type(c_ptr) :: ptr = c_null_ptr
  end type nuce_balancer

  !> A distributed 2D array of real(c_double) (wraps `nuce_array *`).
  type :: nuce_array
    type(c_ptr) :: ptr = c_null_ptr
  end type nuce_array

  interface nuce_balancer_create
    module procedure balancer_create_f08, balancer_create_int
  end interface nuce_balancer_create

  ! A valid address for empty buffers (the C API wants non-NULL pointers).
  real(c_double), target, save :: empty(1)

  interface
    function c_version() bind(c, name='nuce_version') result(p)
      import :: c_ptr
      type(c_ptr) :: p
    end function c_version
    function c_last_error() bind(c, name='nuce_last_error') result(p)
      import :: c_ptr
      type(c_ptr) :: p
    end function c_last_error
    function c_balancer_create_f(comm, out) bind(c, name='nuce_balancer_create_f') result(rc)
      import :: c_int, c_ptr
      integer(c_int), value :: comm
      type(c_ptr), intent(out) :: out
      integer(c_int) :: rc
    end function c_balancer_create_f
    function c_balancer_free(b) bind(c, name='nuce_balancer_free') result(rc)
      import :: c_int, c_ptr
      type(c_ptr), value :: b
      integer(c_int) :: rc
    end function c_balancer_free
    function c_measure(b) bind(c, name='nuce_measure') result(rc)
      import :: c_int, c_ptr
      type(c_ptr), value :: b
      integer(c_int) :: rc
    end function c_measure
    function c_set_speeds(b, speeds, n) bind(c, name='nuce_set_speeds') result(rc)
      import :: c_int, c_ptr, c_size_t
      type(c_ptr), value :: b, speeds
      integer(c_size_t), value :: n
      integer(c_int) :: rc
    end function c_set_speeds
    function c_speeds(b, out, n) bind(c, name='nuce_speeds') result(rc)
      import :: c_int, c_ptr, c_size_t
      type(c_ptr), value :: b, out
      integer(c_size_t), value :: n
      integer(c_int) :: rc
    end function c_speeds
    function c_plan(b, rows, cols) bind(c, name='nuce_plan') result(rc)
      import :: c_int, c_ptr, c_int64_t
      type(c_ptr), value :: b
      integer(c_int64_t), value :: rows, cols
      integer(c_int) :: rc
    end function c_plan
    function c_plan_rect(b, rank, out) bind(c, name='nuce_plan_rect') result(rc)
      import :: c_int, c_ptr, c_int64_t
      type(c_ptr), value :: b
      integer(c_int), value :: rank
      integer(c_int64_t), intent(out) :: out(4)
      integer(c_int) :: rc
    end function c_plan_rect
    function c_record_phase(b, work, seconds) bind(c, name='nuce_record_phase') result(rc)
      import :: c_int, c_ptr, c_double
      type(c_ptr), value :: b
      real(c_double), value :: work, seconds
      integer(c_int) :: rc
    end function c_record_phase
    function c_array_create(b, rows, cols, elem_size, ghost, out) &
        bind(c, name='nuce_array_create') result(rc)
      import :: c_int, c_ptr, c_int64_t, c_size_t
      type(c_ptr), value :: b
      integer(c_int64_t), value :: rows, cols, ghost
      integer(c_size_t), value :: elem_size
      type(c_ptr), intent(out) :: out
      integer(c_int) :: rc
    end function c_array_create
    function c_array_scatter(b, rows, cols, elem_size, ghost, global, global_len, out) &
        bind(c, name='nuce_array_scatter') result(rc)
      import :: c_int, c_ptr, c_int64_t, c_size_t
      type(c_ptr), value :: b, global
      integer(c_int64_t), value :: rows, cols, ghost
      integer(c_size_t), value :: elem_size, global_len
      type(c_ptr), intent(out) :: out
      integer(c_int) :: rc
    end function c_array_scatter
    function c_array_free(a) bind(c, name='nuce_array_free') result(rc)
      import :: c_int, c_ptr
      type(c_ptr), value :: a
      integer(c_int) :: rc
    end function c_array_free
    function c_array_rect(a, rank, out) bind(c, name='nuce_array_rect') result(rc)
      import :: c_int, c_ptr, c_int64_t
      type(c_ptr), value :: a
      integer(c_int), value :: rank
      integer(c_int64_t), intent(out) :: out(4)
      integer(c_int) :: rc
    end function c_array_rect
    function c_array_read(a, padded, len) bind(c, name='nuce_array_read') result(rc)
      import :: c_int, c_ptr, c_size_t
      type(c_ptr), value :: a, padded
      integer(c_size_t), value :: len
      integer(c_int) :: rc
    end function c_array_read
    function c_array_exchange_ghosts(a, padded, len) &
        bind(c, name='nuce_array_exchange_ghosts') result(rc)
      import :: c_int, c_ptr, c_size_t
      type(c_ptr), value :: a, padded
      integer(c_size_t), value :: len
      integer(c_int) :: rc
    end function c_array_exchange_ghosts
    function c_array_gather(a, padded, len, global, global_len) &
        bind(c, name='nuce_array_gather') result(rc)
      import :: c_int, c_ptr, c_size_t
      type(c_ptr), value :: a, padded, global
      integer(c_size_t), value :: len, global_len
      integer(c_int) :: rc
    end function c_array_gather
    function c_maybe_remap_ahead(b, a, iterations, ahead, padded, len, remapped) &
        bind(c, name='nuce_maybe_remap_ahead') result(rc)
      import :: c_int, c_ptr, c_int64_t, c_size_t
      type(c_ptr), value :: b, a, padded
      integer(c_int64_t), value :: iterations, ahead
      integer(c_size_t), value :: len
      integer(c_int), intent(out) :: remapped
      integer(c_int) :: rc
    end function c_maybe_remap_ahead
    function c_set_decomposer(b, name) bind(c, name='nuce_set_decomposer') result(rc)
      import :: c_int, c_ptr, c_char
      type(c_ptr), value :: b
      character(kind=c_char), intent(in) :: name(*)
      integer(c_int) :: rc
    end function c_set_decomposer
    function c_set_hysteresis(b, fraction) bind(c, name='nuce_set_hysteresis') result(rc)
      import :: c_int, c_ptr, c_double
      type(c_ptr), value :: b
      real(c_double), value :: fraction
      integer(c_int) :: rc
    end function c_set_hysteresis
    function c_set_timeout(b, seconds) bind(c, name='nuce_set_timeout') result(rc)
      import :: c_int, c_ptr, c_double
      type(c_ptr), value :: b
      real(c_double), value :: seconds
      integer(c_int) :: rc
    end function c_set_timeout
    function c_waiting_begin() bind(c, name='nuce_waiting_begin') result(rc)
      import :: c_int
      integer(c_int) :: rc
    end function c_waiting_begin
    function c_waiting_end() bind(c, name='nuce_waiting_end') result(rc)
      import :: c_int
      integer(c_int) :: rc
    end function c_waiting_end
  end interface

contains

  !> A C string as a Fortran string.
  function from_c(p) result(s)
    type(c_ptr), intent(in) :: p
    character(len=:), allocatable :: s
    character(kind=c_char), pointer :: chars(:)
    integer :: n
    if (.not. c_associated(p)) then
      s = ''
      return
    end if
    call c_f_pointer(p, chars, [huge(0)])
    n = 0
    do while (chars(n + 1) /= c_null_char)
      n = n + 1
    end do
    allocate (character(len=n) :: s)
    s = transfer(chars(1:n), s)
  end function from_c

  !> The version of libnuce.
  function nuce_version() result(s)
    character(len=:), allocatable :: s
    s = from_c(c_version())
  end function nuce_version

  !> The message of the last failed call on this thread ('' if none).
  function nuce_last_error() result(s)
    character(len=:), allocatable :: s
    s = from_c(c_last_error())
  end function nuce_last_error

  !> Reports `rc` of the call `what` through `ierr`, or stops on failure.
  subroutine done(rc, what, ierr)
    integer(c_int), intent(in) :: rc
    character(len=*), intent(in) :: what
    integer, intent(out), optional :: ierr
    if (present(ierr)) then
      ierr = int(rc)
    else if (rc /= NUCE_OK) then
      write (error_unit, '(a, a, a, i0, a, a)') 'nuce: ', what, ' failed (code ', rc, '): ', &
        nuce_last_error()
      error stop 2
    end if
  end subroutine done

  !> The address of a buffer, or of `empty` when it has no element.
  function address(x) result(p)
    real(c_double), intent(in), target, contiguous :: x(:, :)
    type(c_ptr) :: p
    if (size(x) > 0) then
      p = c_loc(x)
    else
      p = c_loc(empty)
    end if
  end function address

  !> Global bounds in Fortran order from a C rectangle {row, col, rows, cols}.
  subroutine to_box(rect, lo, hi)
    integer(c_int64_t), intent(in) :: rect(4)
    integer(c_int64_t), intent(out) :: lo(2), hi(2)
    lo = [rect(2) + 1, rect(1) + 1]
    hi = [rect(2) + rect(4), rect(1) + rect(3)]
  end subroutine to_box

  !> Creates a balancer over a duplicate of `comm` (collective).
  subroutine balancer_create_f08(comm, b, ierr)
    type(MPI_Comm), intent(in) :: comm
    type(nuce_balancer), intent(out) :: b
    integer, intent(out), optional :: ierr
    call done(c_balancer_create_f(int(comm%MPI_VAL, c_int), b%ptr), 'nuce_balancer_create', ierr)
  end subroutine balancer_create_f08

  !> Creates a balancer over a duplicate of the integer handle `comm` (collective).
  subroutine balancer_create_int(comm, b, ierr)
    integer, intent(in) :: comm
    type(nuce_balancer), intent(out) :: b
    integer, intent(out), optional :: ierr
    call done(c_balancer_create_f(int(comm, c_int), b%ptr), 'nuce_balancer_create', ierr)
  end subroutine balancer_create_int

  !> Frees a balancer (local); the caller's communicator stays.
  subroutine nuce_balancer_free(b, ierr)
    type(nuce_balancer), intent(inout) :: b
    integer, intent(out), optional :: ierr
    call done(c_balancer_free(b%ptr), 'nuce_balancer_free', ierr)
    b%ptr = c_null_ptr
  end subroutine nuce_balancer_free

  !> Measures every rank with the built-in kernel (collective).
  subroutine nuce_measure(b, ierr)
    type(nuce_balancer), intent(in) :: b
    integer, intent(out), optional :: ierr
    call done(c_measure(b%ptr), 'nuce_measure', ierr)
  end subroutine nuce_measure

  !> Sets every rank's speed from rank 0's `speeds` (collective; one per rank).
  subroutine nuce_set_speeds(b, speeds, ierr)
    type(nuce_balancer), intent(in) :: b
    real(c_double), intent(in), target, contiguous :: speeds(:)
    integer, intent(out), optional :: ierr
    type(c_ptr) :: p
    p = c_null_ptr
    if (size(speeds) > 0) p = c_loc(speeds)
    call done(c_set_speeds(b%ptr, p, int(size(speeds), c_size_t)), 'nuce_set_speeds', ierr)
  end subroutine nuce_set_speeds

  !> The current speed estimates, one per rank (local).
  subroutine nuce_speeds(b, speeds, ierr)
    type(nuce_balancer), intent(in) :: b
    real(c_double), intent(out), target, contiguous :: speeds(:)
    integer, intent(out), optional :: ierr
    type(c_ptr) :: p
    p = c_loc(empty)
    if (size(speeds) > 0) p = c_loc(speeds)
    call done(c_speeds(b%ptr, p, int(size(speeds), c_size_t)), 'nuce_speeds', ierr)
  end subroutine nuce_speeds

  !> Plans an n1 x n2 array for the current speeds (collective).
  subroutine nuce_plan(b, n1, n2, ierr)
    type(nuce_balancer), intent(in) :: b
    integer(c_int64_t), intent(in) :: n1, n2
    integer, intent(out), optional :: ierr
    call done(c_plan(b%ptr, n2, n1), 'nuce_plan', ierr)
  end subroutine nuce_plan

  !> Rank `rank`'s block of the last nuce_plan as global bounds lo(2), hi(2) (local).
  subroutine nuce_plan_box(b, rank, lo, hi, ierr)
    type(nuce_balancer), intent(in) :: b
    integer, intent(in) :: rank
    integer(c_int64_t), intent(out) :: lo(2), hi(2)
    integer, intent(out), optional :: ierr
    integer(c_int64_t) :: rect(4)
    integer(c_int) :: rc
    rect = 0
    rc = c_plan_rect(b%ptr, int(rank, c_int), rect)
    call to_box(rect, lo, hi)
    call done(rc, 'nuce_plan_box', ierr)
  end subroutine nuce_plan_box

  !> This rank did `work` units in `seconds` of compute this phase (local).
  subroutine nuce_record_phase(b, work, seconds, ierr)
    type(nuce_balancer), intent(in) :: b
    real(c_double), intent(in) :: work, seconds
    integer, intent(out), optional :: ierr
    call done(c_record_phase(b%ptr, work, seconds), 'nuce_record_phase', ierr)
  end subroutine nuce_record_phase

  !> Plans and creates a zero-filled n1 x n2 array with ghost width `ghost` (collective).
  subroutine nuce_array_create(b, n1, n2, ghost, a, ierr)
    type(nuce_balancer), intent(in) :: b
    integer(c_int64_t), intent(in) :: n1, n2, ghost
    type(nuce_array), intent(out) :: a
    integer, intent(out), optional :: ierr
    call done(c_array_create(b%ptr, n2, n1, c_sizeof(empty(1)), ghost, a%ptr), &
              'nuce_array_create', ierr)
  end subroutine nuce_array_create

  !> Plans an n1 x n2 array and scatters rank 0's `global(n1, n2)` (ignored
  !> elsewhere: pass a zero-size array) with ghost width `ghost` (collective).
  subroutine nuce_array_scatter(b, n1, n2, ghost, global, a, ierr)
    type(nuce_balancer), intent(in) :: b
    integer(c_int64_t), intent(in) :: n1, n2, ghost
    real(c_double), intent(in), target, contiguous :: global(:, :)
    type(nuce_array), intent(out) :: a
    integer, intent(out), optional :: ierr
    type(c_ptr) :: p
    p = c_null_ptr
    if (size(global) > 0) p = c_loc(global)
    call done(c_array_scatter(b%ptr, n2, n1, c_sizeof(empty(1)), ghost, p, &
                              int(size(global), c_size_t), a%ptr), 'nuce_array_scatter', ierr)
  end subroutine nuce_array_scatter

  !> Frees an array (local).
  subroutine nuce_array_free(a, ierr)
    type(nuce_array), intent(inout) :: a
    integer, intent(out), optional :: ierr
    call done(c_array_free(a%ptr), 'nuce_array_free', ierr)
    a%ptr = c_null_ptr
  end subroutine nuce_array_free

  !> Rank `rank`'s block in the array's current layout as global bounds
  !> lo(2), hi(2), 1-based and inclusive (local). An empty block has hi < lo.
  subroutine nuce_array_box(a, rank, lo, hi, ierr)
    type(nuce_array), intent(in) :: a
    integer, intent(in) :: rank
    integer(c_int64_t), intent(out) :: lo(2), hi(2)
    integer, intent(out), optional :: ierr
    integer(c_int64_t) :: rect(4)
    integer(c_int) :: rc
    rect = 0
    rc = c_array_rect(a%ptr, int(rank, c_int), rect)
    call to_box(rect, lo, hi)
    call done(rc, 'nuce_array_box', ierr)
  end subroutine nuce_array_box

  !> Copies nuce's current block, ghosts included, into the padded block `u`
  !> (local): after create, scatter and every remap.
  subroutine nuce_array_read(a, u, ierr)
    type(nuce_array), intent(in) :: a
    real(c_double), intent(inout), target, contiguous :: u(:, :)
    integer, intent(out), optional :: ierr
    call done(c_array_read(a%ptr, address(u), int(size(u), c_size_t)), 'nuce_array_read', ierr)
  end subroutine nuce_array_read

  !> Fills the ghost border of the padded block `u` from the neighbours (collective).
  subroutine nuce_array_exchange_ghosts(a, u, ierr)
    type(nuce_array), intent(in) :: a
    real(c_double), intent(inout), target, contiguous :: u(:, :)
    integer, intent(out), optional :: ierr
    call done(c_array_exchange_ghosts(a%ptr, address(u), int(size(u), c_size_t)), &
              'nuce_array_exchange_ghosts', ierr)
  end subroutine nuce_array_exchange_ghosts

  !> Gathers the array into rank 0's `global(n1, n2)` (ignored elsewhere:
  !> pass a zero-size array) from every rank's padded block `u` (collective).
  subroutine nuce_array_gather(a, u, global, ierr)
    type(nuce_array), intent(in) :: a
    real(c_double), intent(in), target, contiguous :: u(:, :)
    real(c_double), intent(inout), target, contiguous :: global(:, :)
    integer, intent(out), optional :: ierr
    type(c_ptr) :: p
    p = c_null_ptr
    if (size(global) > 0) p = c_loc(global)
    call done(c_array_gather(a%ptr, address(u), int(size(u), c_size_t), p, &
                             int(size(global), c_size_t)), 'nuce_array_gather', ierr)
  end subroutine nuce_array_gather

  !> A balance point after a phase of `iterations` iterations (collective):
  !> measures, decides, remaps. A remap must pay off within `ahead`
  !> iterations (default: `iterations`). `remapped` is .true. on every rank
  !> when the layout changed: then reallocate `u` from nuce_array_box and
  !> refill it with nuce_array_read.
  subroutine nuce_maybe_remap(b, a, iterations, u, remapped, ahead, ierr)
    type(nuce_balancer), intent(in) :: b
    type(nuce_array), intent(in) :: a
    integer(c_int64_t), intent(in) :: iterations
    real(c_double), intent(in), target, contiguous :: u(:, :)
    logical, intent(out) :: remapped
    integer(c_int64_t), intent(in), optional :: ahead
    integer, intent(out), optional :: ierr
    integer(c_int64_t) :: horizon
    integer(c_int) :: flag
    horizon = iterations
    if (present(ahead)) horizon = ahead
    flag = 0
    call done(c_maybe_remap_ahead(b%ptr, a%ptr, iterations, horizon, address(u), &
                                  int(size(u), c_size_t), flag), 'nuce_maybe_remap', ierr)
    remapped = flag /= 0
  end subroutine nuce_maybe_remap

  !> Plans arrays with the decomposer `name` ('column', 'rb', 'best', ...;
  !> collective, the same name on every rank).
  subroutine nuce_set_decomposer(b, name, ierr)
    type(nuce_balancer), intent(in) :: b
    character(len=*), intent(in) :: name
    integer, intent(out), optional :: ierr
    call done(c_set_decomposer(b%ptr, trim(name) // c_null_char), 'nuce_set_decomposer', ierr)
  end subroutine nuce_set_decomposer

  !> The remap hysteresis, a fraction >= 0 (collective, the same on every rank).
  subroutine nuce_set_hysteresis(b, fraction, ierr)
    type(nuce_balancer), intent(in) :: b
    real(c_double), intent(in) :: fraction
    integer, intent(out), optional :: ierr
    call done(c_set_hysteresis(b%ptr, fraction), 'nuce_set_hysteresis', ierr)
  end subroutine nuce_set_hysteresis

  !> The timeout of the balancer's collectives in seconds, 0 = none
  !> (collective, the same on every rank).
  subroutine nuce_set_timeout(b, seconds, ierr)
    type(nuce_balancer), intent(in) :: b
    real(c_double), intent(in) :: seconds
    integer, intent(out), optional :: ierr
    call done(c_set_timeout(b%ptr, seconds), 'nuce_set_timeout', ierr)
  end subroutine nuce_set_timeout

  !> Opens a waiting section (local): its time is not compute for nuce's
  !> automatic timing (the application's own collectives and waits).
  subroutine nuce_waiting_begin(ierr)
    integer, intent(out), optional :: ierr
    call done(c_waiting_begin(), 'nuce_waiting_begin', ierr)
  end subroutine nuce_waiting_begin

  !> Closes the innermost waiting section (local).
  subroutine nuce_waiting_end(ierr)
    integer, intent(out), optional :: ierr
    call done(c_waiting_end(), 'nuce_waiting_end', ierr)
  end subroutine nuce_waiting_end

end module nuce
