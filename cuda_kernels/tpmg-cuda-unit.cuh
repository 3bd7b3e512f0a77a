/* The unit patch's 1D data as the kernel parameter reference_data<k, T>
 * (tpmg-cuda-tensor.cuh) of the constant, tiled, thread and brick kernels and
 * of the transfer: the core's tpmg_level::unit in the kernels' precision, the
 * eigenvectors split into even and odd ones, and the level's scale factors. */
#ifndef TPMG_CUDA_UNIT_CUH
#define TPMG_CUDA_UNIT_CUH

#include <math.h>
#include <stdlib.h>

#include "tpmg-cuda-tensor.cuh"
#include "tpmg-cuda.cuh"

namespace tpmg_cuda {

/* reference_data<k, T> of the unit data u (degree k), without the level's
 * scale factors (all 1). */
template <int k, typename T>
tpmg_status build_reference(const tpmg_context *ctx, const tpmg_unit_data *u,
                            reference_data<k, T> *out) {
  constexpr int N = k + 1, P = 2 * k + 1, I = 2 * k - 1;
  const double *S = u->eigenvectors, *lambda = u->eigenvalues;
  for (int i = 0; i < P * P; ++i) {
    out->mass[i] = T(u->patch_mass[i]);
    out->stiffness[i] = T(u->patch_stiffness[i]);
  }
  for (int i = 0; i < I * I; ++i)
    out->eigenvectors[i] = T(S[i]);
  /* even and odd eigenvectors (see reference_data), symmetrized */
  int even[I], odd[I], n_even = 0, n_odd = 0;
  for (int j = 0; j < I; ++j) {
    double asymmetry = 0, symmetry = 0, size = 0;
    for (int i = 0; i < I; ++i) {
      asymmetry += fabs(S[i * I + j] - S[(I - 1 - i) * I + j]);
      symmetry += fabs(S[i * I + j] + S[(I - 1 - i) * I + j]);
      size += fabs(S[i * I + j]);
    }
    if (asymmetry <= 1e-9 * size)
      even[n_even++] = j;
    else if (symmetry <= 1e-9 * size)
      odd[n_odd++] = j;
  }
  if (n_even != k || n_odd != k - 1)
    return tpmg_error_set(ctx, TPMG_ERROR_NUMERICAL, __FILE__, __LINE__,
                          "unit patch eigenvectors, degree %d: %d even and %d odd, expected %d "
                          "and %d",
                          k, n_even, n_odd, k, k - 1);
  constexpr int H = k - 1;
  for (int e = 0; e < k; ++e) {
    const int j = even[e];
    for (int i = 0; i < k; ++i)
      out->eigen_even[i * k + e] =
          T(i < H ? 0.5 * (S[i * I + j] + S[(I - 1 - i) * I + j]) : S[H * I + j]);
    out->lambda_even_odd[e] = T(lambda[j]);
  }
  for (int o = 0; o < H; ++o) {
    const int j = odd[o];
    for (int i = 0; i < H; ++i)
      out->eigen_odd[i * H + o] = T(0.5 * (S[i * I + j] - S[(I - 1 - i) * I + j]));
    out->lambda_even_odd[k + o] = T(lambda[j]);
  }
  if (k == 1)
    out->eigen_odd[0] = T(0);
  for (int i = 0; i < P * N; ++i)
    out->prolongation[i] = T(u->prolongation[i]);
  for (int d = 0; d < 3; ++d) {
    out->coefficient[d] = out->inverse_h2[d] = T(1);
    out->shift[d] = T(0);
  }
  out->solve_scale = T(1);
  out->reaction = T(0);
  return TPMG_SUCCESS;
}

/* The kernel parameter of level `lvl`: the unit data, cached per precision and
 * degree (the same for every grid of that degree), with the level's scale
 * factors. */
template <int k, typename T>
tpmg_status level_constants(tpmg_context *ctx, const tpmg_level *lvl, reference_data<k, T> *c) {
  backend_data *data = static_cast<backend_data *>(tpmg_backend_data(ctx));
  void *&cached = data->reference[precision_of<T>::value][k];
  if (!cached) {
    auto *fresh = static_cast<reference_data<k, T> *>(malloc(sizeof(reference_data<k, T>)));
    TPMG_CHECK(ctx, fresh, TPMG_ERROR_MEMORY, "allocating the unit patch data failed");
    const tpmg_status status = build_reference(ctx, lvl->unit, fresh);
    if (status != TPMG_SUCCESS) {
      free(fresh);
      return status;
    }
    cached = fresh;
  }
  *c = *static_cast<const reference_data<k, T> *>(cached);
  double product = 1;
  for (int d = 0; d < lvl->dim; ++d)
    product *= lvl->h[d];
  for (int d = 0; d < 3; ++d) {
    c->coefficient[d] = d < lvl->dim ? T(product / (lvl->h[d] * lvl->h[d])) : T(0);
    c->inverse_h2[d] = d < lvl->dim ? T(1.0 / (lvl->h[d] * lvl->h[d])) : T(0);
    /* with a variable coefficient, the local solves add c themselves (surrogate) */
    c->shift[d] =
        d == lvl->dim - 1 && !lvl->coefficient[precision_of<T>::value] ? T(lvl->reaction) : T(0);
  }
  c->solve_scale = T(1.0 / product);
  c->reaction = T(lvl->reaction * product);
  return TPMG_SUCCESS;
}

} // namespace tpmg_cuda

#endif
