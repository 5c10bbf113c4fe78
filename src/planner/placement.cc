#include "planner/placement.h"

#include <algorithm>
#include <limits>
#include <map>

#include "graph/errors.h"

namespace cortexm {

namespace {

enum class Gap { kFirstFit, kBestFit };

void check_arguments(const std::vector<Lifetime>& buffers, int64_t alignment) {
  if (alignment <= 0 || (alignment & (alignment - 1)) != 0)
    throw GraphError("place_buffers: alignment = " + std::to_string(alignment) +
                     " must be a power of two");
  for (size_t i = 0; i < buffers.size(); ++i) {
    const Lifetime& b = buffers[i];
    if (b.size < 0)
      throw GraphError("place_buffers: buffer " + std::to_string(i) + " has size " +
                       std::to_string(b.size) + "; it must be >= 0");
    if (b.first < 0 || b.last < b.first)
      throw GraphError("place_buffers: buffer " + std::to_string(i) + " lives from step " +
                       std::to_string(b.first) + " to " + std::to_string(b.last) +
                       "; it needs 0 <= first <= last");
    for (const Part& p : b.parts)
      if (p.offset < 0 || p.offset % alignment != 0 || p.size < 0 || p.offset + p.size > align_up(b.size, alignment) ||
          p.first < b.first || p.last < p.first || p.last > b.last)
        throw GraphError("place_buffers: buffer " + std::to_string(i) + " has a part of " +
                         std::to_string(p.size) + " bytes at " + std::to_string(p.offset) + ", steps " +
                         std::to_string(p.first) + ".." + std::to_string(p.last) +
                         " outside it or not aligned");
  }
}

// The buffer's parts: its own, or all of it over its lifetime.
std::vector<Part> parts_of(const Lifetime& b) {
  if (!b.parts.empty()) return b.parts;
  return {Part{0, b.size, b.first, b.last}};
}

bool parts_overlap_in_time(const Part& a, const Part& b) { return a.first <= b.last && b.first <= a.last; }

// Whether buffers a at offset oa and b at ob overlap in memory at a step both are live.
bool collide(const Lifetime& a, int64_t oa, const Lifetime& b, int64_t ob, int64_t alignment) {
  for (const Part& pa : parts_of(a))
    for (const Part& pb : parts_of(b)) {
      if (pa.size == 0 || pb.size == 0 || !parts_overlap_in_time(pa, pb)) continue;
      const int64_t a0 = oa + pa.offset, b0 = ob + pb.offset;
      if (a0 < b0 + align_up(pb.size, alignment) && b0 < a0 + align_up(pa.size, alignment)) return true;
    }
  return false;
}

bool overlap_in_time(const Lifetime& a, const Lifetime& b) {
  return a.first <= b.last && b.first <= a.last;
}

// The offset of buffers[index] among its placed neighbours when some have parts: the lowest (first
// fit) or the tightest (best fit: least room above its parts, else the lowest) of the offsets that
// collide with no neighbour among 0, those putting one of its parts right above a neighbour's
// part, and the one above every neighbour.
int64_t place_with_parts(const std::vector<Lifetime>& buffers, int64_t alignment,
                         const std::vector<int64_t>& offsets, const std::vector<size_t>& neighbours,
                         size_t index, Gap gap) {
  const Lifetime& b = buffers[index];
  const std::vector<Part> own = parts_of(b);
  std::vector<int64_t> candidates = {0};
  int64_t top = 0;  // above every neighbour: always fits
  for (size_t n : neighbours) top = std::max(top, offsets[n] + align_up(buffers[n].size, alignment));
  candidates.push_back(top);
  for (size_t n : neighbours)
    for (const Part& pn : parts_of(buffers[n]))
      for (const Part& pb : own)
        if (parts_overlap_in_time(pn, pb)) {
          const int64_t at = offsets[n] + pn.offset + align_up(pn.size, alignment) - pb.offset;
          if (at >= 0) candidates.push_back(at);
        }
  std::sort(candidates.begin(), candidates.end());
  candidates.erase(std::unique(candidates.begin(), candidates.end()), candidates.end());
  int64_t chosen = -1;
  int64_t chosen_room = std::numeric_limits<int64_t>::max();
  for (int64_t at : candidates) {
    bool fits = true;
    for (size_t n : neighbours) fits = fits && !collide(b, at, buffers[n], offsets[n], alignment);
    if (!fits) continue;
    if (gap == Gap::kFirstFit) return at;
    int64_t room = std::numeric_limits<int64_t>::max();  // bytes free above its parts
    for (size_t n : neighbours)
      for (const Part& pn : parts_of(buffers[n]))
        for (const Part& pb : own) {
          const int64_t end = at + pb.offset + align_up(pb.size, alignment), start = offsets[n] + pn.offset;
          if (pn.size > 0 && parts_overlap_in_time(pn, pb) && start >= end) room = std::min(room, start - end);
        }
    if (chosen < 0 || room < chosen_room) {
      chosen = at;
      chosen_room = room;
    }
  }
  return chosen;
}

// Places buffers in `order` one at a time in a gap among the already-placed buffers whose
// lifetimes overlap.
std::vector<int64_t> place_in_order(const std::vector<Lifetime>& buffers, int64_t alignment,
                                    const std::vector<size_t>& order, Gap gap) {
  std::vector<int64_t> offsets(buffers.size(), 0);
  std::vector<size_t> placed;
  placed.reserve(buffers.size());
  std::vector<size_t> neighbours;
  for (size_t index : order) {
    const Lifetime& b = buffers[index];
    const int64_t need = align_up(b.size, alignment);
    if (need == 0) continue;  // takes no memory: offset 0
    neighbours.clear();
    bool with_parts = !b.parts.empty();
    for (size_t p : placed)
      if (overlap_in_time(b, buffers[p])) {
        neighbours.push_back(p);
        with_parts = with_parts || !buffers[p].parts.empty();
      }
    if (with_parts) {
      offsets[index] = place_with_parts(buffers, alignment, offsets, neighbours, index, gap);
      placed.push_back(index);
      continue;
    }
    std::sort(neighbours.begin(), neighbours.end(), [&](size_t x, size_t y) {
      return offsets[x] != offsets[y] ? offsets[x] < offsets[y] : x < y;
    });
    int64_t cursor = 0;
    int64_t chosen = -1;
    int64_t chosen_gap = std::numeric_limits<int64_t>::max();
    for (size_t p : neighbours) {
      const int64_t gap_size = offsets[p] - cursor;
      if (gap_size >= need) {
        if (gap == Gap::kFirstFit) {
          chosen = cursor;
          break;
        }
        if (gap_size < chosen_gap) {
          chosen = cursor;
          chosen_gap = gap_size;
        }
      }
      cursor = std::max(cursor, offsets[p] + align_up(buffers[p].size, alignment));
    }
    offsets[index] = chosen >= 0 ? chosen : cursor;
    placed.push_back(index);
  }
  return offsets;
}

std::vector<size_t> indices(size_t n) {
  std::vector<size_t> order(n);
  for (size_t i = 0; i < n; ++i) order[i] = i;
  return order;
}

int64_t duration(const Lifetime& b) { return static_cast<int64_t>(b.last) - b.first + 1; }

std::vector<size_t> order_by_size(const std::vector<Lifetime>& buffers) {
  std::vector<size_t> order = indices(buffers.size());
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t x, size_t y) { return buffers[x].size > buffers[y].size; });
  return order;
}

std::vector<size_t> order_by_area(const std::vector<Lifetime>& buffers) {
  std::vector<size_t> order = indices(buffers.size());
  std::stable_sort(order.begin(), order.end(), [&](size_t x, size_t y) {
    const Lifetime& a = buffers[x];
    const Lifetime& b = buffers[y];
    const long double area_a = static_cast<long double>(a.size) * duration(a);
    const long double area_b = static_cast<long double>(b.size) * duration(b);
    if (area_a != area_b) return area_a > area_b;
    return a.size > b.size;
  });
  return order;
}

std::vector<size_t> order_by_duration(const std::vector<Lifetime>& buffers) {
  std::vector<size_t> order = indices(buffers.size());
  std::stable_sort(order.begin(), order.end(), [&](size_t x, size_t y) {
    const Lifetime& a = buffers[x];
    const Lifetime& b = buffers[y];
    if (duration(a) != duration(b)) return duration(a) > duration(b);
    return a.size > b.size;
  });
  return order;
}

// Steps by decreasing live bytes; at each step, the buffers live there not yet taken, largest first.
std::vector<size_t> order_by_breadth(const std::vector<Lifetime>& buffers, int64_t alignment) {
  std::map<int32_t, int64_t> breadth;
  for (const Lifetime& b : buffers)
    for (int64_t s = b.first; s <= b.last; ++s)
      breadth[static_cast<int32_t>(s)] += align_up(b.size, alignment);
  std::vector<std::pair<int32_t, int64_t>> steps(breadth.begin(), breadth.end());
  std::stable_sort(steps.begin(), steps.end(),
                   [](const auto& x, const auto& y) { return x.second > y.second; });
  const std::vector<size_t> by_size = order_by_size(buffers);
  std::vector<bool> taken(buffers.size(), false);
  std::vector<size_t> order;
  order.reserve(buffers.size());
  for (const auto& step : steps)
    for (size_t i : by_size)
      if (!taken[i] && buffers[i].first <= step.first && step.first <= buffers[i].last) {
        taken[i] = true;
        order.push_back(i);
      }
  return order;
}

}  // namespace

int64_t align_up(int64_t size, int64_t alignment) {
  return (size + alignment - 1) / alignment * alignment;
}

const std::vector<std::string>& placement_policies() {
  static const std::vector<std::string> names = {"size_first_fit", "size_best_fit", "area_first_fit",
                                                 "duration_first_fit", "breadth_best_fit"};
  return names;
}

int64_t peak_live_bytes(const std::vector<Lifetime>& buffers, int64_t alignment) {
  check_arguments(buffers, alignment);
  std::map<int64_t, int64_t> delta;  // step -> change of live bytes
  for (const Lifetime& b : buffers)
    for (const Part& p : parts_of(b)) {
      const int64_t bytes = align_up(p.size, alignment);
      delta[p.first] += bytes;
      delta[static_cast<int64_t>(p.last) + 1] -= bytes;
    }
  int64_t live = 0;
  int64_t peak = 0;
  for (const auto& [step, change] : delta) {
    live += change;
    peak = std::max(peak, live);
  }
  return peak;
}

Placement place_buffers_with(const std::vector<Lifetime>& buffers, int64_t alignment,
                             const std::string& policy) {
  check_arguments(buffers, alignment);
  Placement result;
  result.policy = policy;
  if (policy == "size_first_fit") {
    result.offsets = place_in_order(buffers, alignment, order_by_size(buffers), Gap::kFirstFit);
  } else if (policy == "size_best_fit") {
    result.offsets = place_in_order(buffers, alignment, order_by_size(buffers), Gap::kBestFit);
  } else if (policy == "area_first_fit") {
    result.offsets = place_in_order(buffers, alignment, order_by_area(buffers), Gap::kFirstFit);
  } else if (policy == "duration_first_fit") {
    result.offsets = place_in_order(buffers, alignment, order_by_duration(buffers), Gap::kFirstFit);
  } else if (policy == "breadth_best_fit") {
    result.offsets =
        place_in_order(buffers, alignment, order_by_breadth(buffers, alignment), Gap::kBestFit);
  } else {
    std::string known;
    for (const std::string& name : placement_policies()) known += (known.empty() ? "" : ", ") + name;
    throw GraphError("place_buffers: policy = '" + policy + "' is not one of " + known);
  }
  for (size_t i = 0; i < buffers.size(); ++i)
    result.arena_size = std::max(result.arena_size, result.offsets[i] + align_up(buffers[i].size, alignment));
  result.lower_bound = peak_live_bytes(buffers, alignment);
  return result;
}

Placement place_buffers(const std::vector<Lifetime>& buffers, int64_t alignment) {
  Placement best;
  bool have = false;
  for (const std::string& policy : placement_policies()) {
    Placement candidate = place_buffers_with(buffers, alignment, policy);
    if (!have || candidate.arena_size < best.arena_size) {
      best = std::move(candidate);
      have = true;
    }
    if (best.arena_size == best.lower_bound) break;  // optimal: no policy can do better
  }
  return best;
}

std::string check_placement(const std::vector<Lifetime>& buffers, int64_t alignment,
                            const Placement& placement, const std::vector<std::string>& labels) {
  auto name = [&](size_t i) {
    return i < labels.size() ? labels[i] : "buffer " + std::to_string(i);
  };
  if (alignment <= 0 || (alignment & (alignment - 1)) != 0)
    return "alignment " + std::to_string(alignment) + " is not a power of two";
  if (placement.offsets.size() != buffers.size())
    return std::to_string(placement.offsets.size()) + " offsets for " +
           std::to_string(buffers.size()) + " buffers";
  for (size_t i = 0; i < buffers.size(); ++i) {
    const int64_t offset = placement.offsets[i];
    if (offset < 0 || offset % alignment != 0)
      return name(i) + " at offset " + std::to_string(offset) +
             " is not aligned to " + std::to_string(alignment);
    if (offset + align_up(buffers[i].size, alignment) > placement.arena_size)
      return name(i) + " at [" + std::to_string(offset) + ", " +
             std::to_string(offset + buffers[i].size) + ") ends past the arena of " +
             std::to_string(placement.arena_size) + " bytes";
  }
  for (size_t i = 0; i < buffers.size(); ++i)
    for (size_t j = i + 1; j < buffers.size(); ++j) {
      if (buffers[i].size == 0 || buffers[j].size == 0 || !overlap_in_time(buffers[i], buffers[j]))
        continue;
      if (collide(buffers[i], placement.offsets[i], buffers[j], placement.offsets[j], alignment))
        return name(i) + " and " + name(j) +
               " are live at the same step and overlap in memory";
    }
  const int64_t peak = peak_live_bytes(buffers, alignment);
  if (placement.lower_bound != peak)
    return "lower bound " + std::to_string(placement.lower_bound) + " is not the peak live bytes " +
           std::to_string(peak);
  if (placement.arena_size < peak)
    return "arena " + std::to_string(placement.arena_size) + " is below the lower bound " +
           std::to_string(peak);
  return "";
}

}  // namespace cortexm
