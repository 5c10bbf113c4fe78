#include "cortexm/portable/amax.h"

#include "reduction_walk.h"

namespace cortexm::portable {

namespace {

template <typename T>
bool is_nan(T v) {
  return v != v;  // false for integers
}

template <typename T>
void extremum(const MeanParams& p, Extremum kind, const T* in, T* out) {
  const bool max = kind == Extremum::kMax;
  T best = 0;
  bool first = true;
  walk_reduction(
      p, [&](int64_t) { first = true; },
      [&](int64_t offset) {
        const T v = in[offset];
        if (first || is_nan(v) || (max ? v > best : v < best)) best = v;
        first = false;
        return !is_nan(best);  // the first NaN is the result
      },
      [&](int64_t o) { out[o] = best; });
}

template <typename T>
void arg_extremum(const MeanParams& p, Extremum kind, const T* in, int64_t* out) {
  const bool max = kind == Extremum::kMax;
  T best = 0;
  int64_t index = 0, best_index = 0;
  walk_reduction(
      p, [&](int64_t) { index = 0; },
      [&](int64_t offset) {
        const T v = in[offset];
        if (index == 0 || is_nan(v) || (max ? v > best : v < best)) {
          best = v;
          best_index = index;
        }
        ++index;
        return !is_nan(best);  // the first NaN is the result
      },
      [&](int64_t o) { out[o] = best_index; });
}

}  // namespace

Error extremum_prepare(const MeanParams& p, Shape* output) {
  CORTEXM_RETURN_IF_ERROR(mean_prepare(p, output));
  for (int d = 0; d < p.input.rank; ++d) {
    bool reduced = p.num_dims == 0;
    for (int i = 0; i < p.num_dims; ++i) reduced = reduced || p.dims[i] == d || p.dims[i] + p.input.rank == d;
    if (reduced && p.input.dims[d] == 0)
      return invalid("self.shape", p.input.dims[d], "must not be 0 in a reduced dim", d);
  }
  return kOk;
}

void extremum_f32(const MeanParams& p, Extremum kind, const float* in, float* out) {
  extremum(p, kind, in, out);
}

void extremum_s8(const MeanParams& p, Extremum kind, const int8_t* in, int8_t* out) {
  extremum(p, kind, in, out);
}

void extremum_s16(const MeanParams& p, Extremum kind, const int16_t* in, int16_t* out) {
  extremum(p, kind, in, out);
}

void arg_extremum_f32(const MeanParams& p, Extremum kind, const float* in, int64_t* out) {
  arg_extremum(p, kind, in, out);
}

void arg_extremum_s8(const MeanParams& p, Extremum kind, const int8_t* in, int64_t* out) {
  arg_extremum(p, kind, in, out);
}

void arg_extremum_s16(const MeanParams& p, Extremum kind, const int16_t* in, int64_t* out) {
  arg_extremum(p, kind, in, out);
}

}  // namespace cortexm::portable
