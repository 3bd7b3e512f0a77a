/* The 3D vertex-patch smoother kernels for every degree of the table. */
#include "tpmg-cuda-smoother.cuh"

namespace tpmg_cuda {

template tpmg_status patch_fused<3>(tpmg_context *, const tpmg_level *, tpmg_precision, int, int,
                                    const tpmg_index *, const void *, void *);
template tpmg_status patch_residual<3>(tpmg_context *, const tpmg_level *, tpmg_precision, int,
                                       const void *, const void *, void *);
template tpmg_status patch_solve<3>(tpmg_context *, const tpmg_level *, tpmg_precision, int,
                                    const void *, void *);

} // namespace tpmg_cuda
