! checks.f90 — the checks of errors.f90, graph.f90, dgraph.f90 and hangs.f90
! (module `checks`): `expect` counts a check of a code and reports a failure,
! `expect_error` also checks the error's message (`str` writes the numbers in
! the text it looks for), `finish` ends the program
! with "<tag>: all N checks passed on P ranks" (exit 0) or exit 1.
module checks
  use, intrinsic :: iso_c_binding, only: c_int64_t
  use mpi_f08
  use nuce, only: nuce_balancer, nuce_last_error, nuce_plan_box, NUCE_OK
  implicit none
  private
  public :: expect, expect_error, finish, str

  integer, save :: total = 0, failures = 0
  !> The message of a known failing call (nuce_plan_box on a balancer never
  !> created), made after every check: an error whose message is still this
  !> one left no message of its own (the last message stays until the next
  !> failing call).
  character(len=:), allocatable, save :: stale

contains

  !> Checks `got` against `want`; a collective check (called by every rank)
  !> also asserts that every rank got the same code. A failure prints
  !> `FAILED: rank R: <what>: got …`.
  subroutine expect(got, want, collective, what)
    integer, intent(in) :: got, want
    logical, intent(in) :: collective
    character(len=*), intent(in) :: what
    integer :: lo_code, hi_code, rank
    total = total + 1
    lo_code = got
    hi_code = got
    if (collective) then
      call MPI_Allreduce(got, lo_code, 1, MPI_INTEGER, MPI_MIN, MPI_COMM_WORLD)
      call MPI_Allreduce(got, hi_code, 1, MPI_INTEGER, MPI_MAX, MPI_COMM_WORLD)
    end if
    if (got /= want .or. lo_code /= hi_code) then
      failures = failures + 1
      call MPI_Comm_rank(MPI_COMM_WORLD, rank)
      write (*, '(a, i0, a, a, a, i0, a, i0, a, l1, a, a, a)') 'FAILED: rank ', rank, ': ', what, &
        ': got ', got, ', want ', want, ' (same on every rank: ', lo_code == hi_code, ') (', &
        nuce_last_error(), ')'
    end if
    call mark()
  end subroutine expect

  !> Checks an error: `got` must be the error code `want` (same on every rank
  !> when `collective`, as `expect`), and the call must have left a message
  !> of its own (`nuce_last_error()`: not empty, not the previous one)
  !> containing `has` (with `only_rank`: on that rank only, the others need
  !> a message of their own). A failure prints `FAILED: rank R: <what>: …`
  !> with the message.
  subroutine expect_error(got, want, collective, what, has, only_rank)
    integer, intent(in) :: got, want
    logical, intent(in) :: collective
    character(len=*), intent(in) :: what, has
    integer, intent(in), optional :: only_rank
    character(len=:), allocatable :: message
    logical :: previous, text
    integer :: rank
    if (want == NUCE_OK .or. len(has) == 0) error stop 'expect_error: want an error and a text'
    message = nuce_last_error()
    previous = .false.
    if (allocated(stale)) previous = message == stale
    call MPI_Comm_rank(MPI_COMM_WORLD, rank)
    text = index(message, has) > 0
    if (present(only_rank)) text = text .or. rank /= only_rank
    call expect(got, want, collective, what)
    if (got == want .and. (len(message) == 0 .or. previous .or. .not. text)) then
      failures = failures + 1
      if (previous) then
        write (*, '(a, i0, a, a, a, a, a)') 'FAILED: rank ', rank, ': ', what, &
          ': no message of its own (still the previous one, "', message, '")'
      else
        write (*, '(a, i0, a, a, a, a, a, a, a)') 'FAILED: rank ', rank, ': ', what, &
          ': the message "', message, '" does not contain "', has, '"'
      end if
    end if
  end subroutine expect_error

  !> `i` in decimal, without blanks (to build the texts `expect_error` looks for).
  function str(i) result(s)
    integer, intent(in) :: i
    character(len=:), allocatable :: s
    character(len=12) :: buffer
    write (buffer, '(i0)') i
    s = trim(buffer)
  end function str

  !> Makes the known failing call and keeps its message in `stale`.
  subroutine mark()
    type(nuce_balancer) :: never_created
    integer(c_int64_t) :: lo(2), hi(2)
    integer :: ierr
    call nuce_plan_box(never_created, 0, lo, hi, ierr)
    stale = nuce_last_error()
    if (ierr == NUCE_OK .or. len(stale) == 0) then
      failures = failures + 1
      write (*, '(a, i0, a, a, a)') 'FAILED: nuce_plan_box on a balancer never created gave ', ierr, &
        ' with message "', stale, '"'
    end if
  end subroutine mark

  !> Sums the failures of every rank, prints the summary on rank 0 as
  !> `<tag>: all N checks passed on P ranks`, finalizes MPI and stops with 1
  !> after a failure anywhere (collective).
  subroutine finish(tag)
    character(len=*), intent(in) :: tag
    integer :: rank, nranks
    call MPI_Comm_rank(MPI_COMM_WORLD, rank)
    call MPI_Comm_size(MPI_COMM_WORLD, nranks)
    call MPI_Allreduce(MPI_IN_PLACE, failures, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD)
    if (rank == 0 .and. failures == 0) write (*, '(a, a, i0, a, i0, a)') tag, ': all ', total, &
      ' checks passed on ', nranks, ' ranks'
    call MPI_Finalize()
    if (failures /= 0) error stop 1
  end subroutine finish

end module checks
