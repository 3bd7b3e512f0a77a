/* The 2D grid transfer for every degree of the table. */
#include "tpmg-cuda-transfer.cuh"

namespace tpmg_cuda {

template tpmg_status prolongate_add<2>(tpmg_context *, const tpmg_level *, const tpmg_level *,
                                       tpmg_precision, const void *, void *);
template tpmg_status restrict_<2>(tpmg_context *, const tpmg_level *, const tpmg_level *,
                                  tpmg_precision, const void *, void *);

} // namespace tpmg_cuda
