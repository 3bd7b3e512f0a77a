/* The 3D level operator and grid transfer kernels for every degree of the table. */
#include "tpmg-cuda-kernels.cuh"

namespace tpmg_cuda {

template tpmg_status laplace<3>(tpmg_context *, const tpmg_level *, tpmg_precision, tpmg_kernel,
                                const void *, void *);
template tpmg_status prolongate_add<3>(tpmg_context *, const tpmg_level *, const tpmg_level *,
                                       tpmg_precision, const void *, void *);
template tpmg_status restrict_<3>(tpmg_context *, const tpmg_level *, const tpmg_level *,
                                  tpmg_precision, const void *, void *);

} // namespace tpmg_cuda
