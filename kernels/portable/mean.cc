#include "cortexm/portable/mean.h"

#include "reduction_walk.h"

namespace cortexm::portable {

namespace {

// reduced[d] for each input dim; rank 0 has nothing to reduce.
void reduced_dims(const MeanParams& p, bool* reduced) {
  for (int d = 0; d < p.input.rank; ++d) reduced[d] = p.num_dims == 0;
  for (int i = 0; i < p.num_dims; ++i) {
    if (p.input.rank == 0) continue;
    const int64_t d = p.dims[i] < 0 ? p.dims[i] + p.input.rank : p.dims[i];
    reduced[d] = true;
  }
}

}  // namespace

Error mean_prepare(const MeanParams& p, Shape* output) {
  CORTEXM_RETURN_IF_ERROR(check_shape(p.input, "self"));
  if (p.num_dims < 0 || p.num_dims > kMaxDims)
    return invalid("dim.length", p.num_dims, "must be in [0, 6]");
  bool seen[kMaxDims] = {false, false, false, false, false, false};
  for (int i = 0; i < p.num_dims; ++i) {
    int32_t d = 0;
    CORTEXM_RETURN_IF_ERROR(normalize_dim(p.dims[i], p.input.rank, &d, "dim", true));
    if (seen[d]) return invalid("dim", p.dims[i], "names a dim more than once", i);
    seen[d] = true;
  }
  if (output) {
    bool reduced[kMaxDims];
    reduced_dims(p, reduced);
    Shape out;
    out.rank = 0;
    for (int d = 0; d < p.input.rank; ++d) {
      if (!reduced[d])
        out.dims[out.rank++] = p.input.dims[d];
      else if (p.keepdim)
        out.dims[out.rank++] = 1;
    }
    *output = out;
  }
  return kOk;
}

namespace {

// Each output's reduced elements summed in double; divided by their count for a mean.
void reduce_sum(const MeanParams& p, const float* in, float* out, bool mean) {
  double sum = 0.0;
  int64_t count = 0;
  walk_reduction(
      p,
      [&](int64_t) {
        sum = 0.0;
        count = 0;
      },
      [&](int64_t offset) {
        sum += in[offset];
        ++count;
        return true;
      },
      [&](int64_t o) { out[o] = static_cast<float>(mean ? sum / static_cast<double>(count) : sum); });
}

}  // namespace

void mean_f32(const MeanParams& p, const float* in, float* out) { reduce_sum(p, in, out, true); }

void sum_f32(const MeanParams& p, const float* in, float* out) { reduce_sum(p, in, out, false); }

}  // namespace cortexm::portable
