! checks.f90 — the checks of errors.f90 and graph.f90 (module `checks`):
! `expect` counts a check and reports a failure, `finish` ends the program
! with "<tag>: all N checks passed on P ranks" (exit 0) or exit 1.
module checks
  use mpi_f08
  use nuce, only: nuce_last_error
  implicit none
  private
  public :: expect, finish

  integer, save :: total = 0, failures = 0

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
  end subroutine expect

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
