/* The 3D level operator for every degree of the table. */
#include "tpmg-cuda-operator.cuh"

namespace tpmg_cuda {

template tpmg_status laplace<3>(tpmg_context *, const tpmg_level *, tpmg_precision, const void *,
                                void *);
template tpmg_status operator_work<3>(tpmg_context *, const tpmg_level *, tpmg_precision,
                                      tpmg_work *);

} // namespace tpmg_cuda
