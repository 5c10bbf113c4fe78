#include "cortexm/portable/mean.h"

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
  bool reduced[kMaxDims];
  reduced_dims(p, reduced);
  // Kept and reduced dims, each outermost first, with their input strides.
  int64_t strides[kMaxDims];
  int64_t s = 1;
  for (int d = p.input.rank - 1; d >= 0; --d) {
    strides[d] = s;
    s *= p.input.dims[d];
  }
  int64_t kept_dims[kMaxDims], kept_strides[kMaxDims], red_dims[kMaxDims], red_strides[kMaxDims];
  int kept = 0, red = 0;
  int64_t outputs = 1, count = 1;
  for (int d = 0; d < p.input.rank; ++d) {
    if (reduced[d]) {
      red_dims[red] = p.input.dims[d];
      red_strides[red++] = strides[d];
      count *= p.input.dims[d];
    } else {
      kept_dims[kept] = p.input.dims[d];
      kept_strides[kept++] = strides[d];
      outputs *= p.input.dims[d];
    }
  }
  int64_t kept_index[kMaxDims] = {0, 0, 0, 0, 0, 0};
  int64_t base = 0;
  for (int64_t o = 0; o < outputs; ++o) {
    double sum = 0.0;
    if (count > 0) {
      int64_t red_index[kMaxDims] = {0, 0, 0, 0, 0, 0};
      int64_t offset = 0;
      for (int64_t r = 0; r < count; ++r) {
        sum += in[base + offset];
        for (int d = red - 1; d >= 0; --d) {
          offset += red_strides[d];
          if (++red_index[d] < red_dims[d]) break;
          offset -= red_strides[d] * red_dims[d];
          red_index[d] = 0;
        }
      }
    }
    out[o] = static_cast<float>(mean ? sum / static_cast<double>(count) : sum);
    for (int d = kept - 1; d >= 0; --d) {
      base += kept_strides[d];
      if (++kept_index[d] < kept_dims[d]) break;
      base -= kept_strides[d] * kept_dims[d];
      kept_index[d] = 0;
    }
  }
}

}  // namespace

void mean_f32(const MeanParams& p, const float* in, float* out) { reduce_sum(p, in, out, true); }

void sum_f32(const MeanParams& p, const float* in, float* out) { reduce_sum(p, in, out, false); }

}  // namespace cortexm::portable
