# Sourced by the scripts: Open MPI settings for these machines (root, oversubscription, yielding).
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# Waits yield the core (the scripts oversubscribe these 2-core machines);
# OMPI_MCA_mpi_yield_when_idle=0 set by the caller (Open MPI's default for one
# rank per core) is kept.
export OMPI_MCA_rmaps_base_oversubscribe=1
export OMPI_MCA_mpi_yield_when_idle="${OMPI_MCA_mpi_yield_when_idle:-1}"
# Shared-memory and self transports only by default (one machine); no network probing.
export OMPI_MCA_btl="${OMPI_MCA_btl:-self,vader}"
export OMPI_MCA_btl_vader_single_copy_mechanism=none
