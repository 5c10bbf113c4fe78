// Program files from Python: write_program (graph + layout -> bytes) and LoadedProgram (the
// runtime on the host: verify, run with numpy, profile per op).
#include <pybind11/stl.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cstring>
#include <mutex>
#include <new>
#include <stdexcept>
#include <system_error>
#include <thread>

#include "bindings/tensor_convert.h"
#include "graph/errors.h"
#include "planner/memory_plan.h"
#include "program/program_generated.h"
#include "program/quantized_io.h"
#include "program/status_message.h"
#include "program/writer.h"
#include "runtime/ops/op_paths.h"
#include "runtime/program.h"
#include "target/target_config.h"

namespace cortexm::bindings {

namespace {

using GraphPtr = std::shared_ptr<Graph>;

// run_batch's thread limit: each thread holds an arena, and more threads than cores only queue.
constexpr int64_t kMaxBatchThreads = 256;

struct AlignedFree {
  void operator()(uint8_t* p) const { ::operator delete(p, std::align_val_t(runtime::kAlignment)); }
};
using AlignedBytes = std::unique_ptr<uint8_t, AlignedFree>;
constexpr size_t kPackAlignment = 64;  // the packed weights' (ZMM loads)
struct PackedFree {
  void operator()(uint8_t* p) const { ::operator delete(p, std::align_val_t(kPackAlignment)); }
};
using PackedBytes = std::unique_ptr<uint8_t, PackedFree>;

AlignedBytes aligned_bytes(size_t size) {
  auto* p = static_cast<uint8_t*>(::operator new(size ? size : 1, std::align_val_t(runtime::kAlignment)));
  std::memset(p, 0, size ? size : 1);
  return AlignedBytes(p);
}

// A layout of the wrong shape or with non-int entries is a ValueError naming the layout, not
// pybind's cast error.
program::ArenaLayout layout_from_python(const GraphPtr& g, const py::object& obj) {
  program::ArenaLayout layout;
  try {
    if (!py::isinstance<py::dict>(obj)) throw py::cast_error();
    auto d = py::reinterpret_borrow<py::dict>(obj);
    for (auto item : d["values"].cast<py::dict>())
      layout.value_offsets[item.first.cast<ValueId>()] = item.second.cast<int64_t>();
    for (auto item : d["scratch"].cast<py::dict>())
      layout.scratch[item.first.cast<int32_t>()] = item.second.cast<std::pair<int64_t, int64_t>>();
    layout.arena_size = d["arena_size"].cast<int64_t>();
  } catch (const py::cast_error&) {
    throw py::value_error("write_program: layout = " + std::string(py::repr(obj)) +
                          " must be None, 'sequential' or {'values': {value id: offset}, 'scratch': "
                          "{node index: (offset, size)}, 'arena_size': n} with int entries");
  } catch (const py::error_already_set&) {
    throw py::value_error("write_program: layout = " + std::string(py::repr(obj)) +
                          " must be None, 'sequential' or {'values': {value id: offset}, 'scratch': "
                          "{node index: (offset, size)}, 'arena_size': n} with int entries");
  }
  return layout;
}

class LoadedProgram {
 public:
  LoadedProgram(const py::bytes& data, const std::string& origin) : origin_(origin) {
    const std::string bytes = data;
    size_ = bytes.size();
    buffer_ = aligned_bytes(size_);
    if (size_) std::memcpy(buffer_.get(), bytes.data(), size_);
    const runtime::Status status = runtime::Program::load(buffer_.get(), size_, &program_);
    if (!status.ok()) throw GraphError(program::status_message(status, buffer_.get(), size_, origin));
    // Each op's params decoded once, as a firmware does (read-only while runs share it).
    op_state_.resize((program_.op_state_size() + 7) / 8 + 1);
    const runtime::Status bound = program_.init_op_state(op_state_.data(), op_state_.size() * 8);
    if (!bound.ok()) throw GraphError(program::status_message(bound, buffer_.get(), size_, origin));
    release_arena(new_arena());  // the first run's arena: a program that cannot get one fails here
    packing(host_variant());  // the weights packed for the variant in use (others on their first run)
  }

  const runtime::Program& program() const { return program_; }

  py::dict tensor_dict(int32_t index) const {
    const fb::Tensor* t = program_.fb().tensors()->Get(index);
    const runtime::TensorView v = program_.tensor(index, nullptr);
    py::dict d;
    d["index"] = index;
    d["name"] = t->name() ? t->name()->str() : std::string();
    d["shape"] = py::tuple(py::cast(std::vector<int64_t>(v.shape, v.shape + v.rank)));
    d["dtype"] = dtype_name(static_cast<DType>(t->dtype()));
    d["location"] = t->location() == fb::Location_Arena ? "arena" : "constant";
    d["offset"] = t->location() == fb::Location_Arena ? static_cast<int64_t>(t->offset()) : -1;
    d["nbytes"] = v.nbytes();
    std::vector<int64_t> order;
    if (t->dim_order()) for (uint8_t k : *t->dim_order()) order.push_back(k);
    d["dim_order"] = order;
    // One scale and zero point (a per-tensor quantized tensor), else None.
    const fb::QParams* q = t->qparams();
    const bool per_tensor = q && q->axis() < 0 && q->scales() && q->zero_points() && q->scales()->size() == 1 &&
                            q->zero_points()->size() == 1;
    d["scale"] = per_tensor ? py::cast(q->scales()->Get(0)) : py::none();
    d["zero_point"] = per_tensor ? py::cast(static_cast<int64_t>(q->zero_points()->Get(0))) : py::none();
    return d;
  }

  py::list tensors() const {
    py::list out;
    for (int32_t i = 0; i < program_.num_tensors(); ++i) out.append(tensor_dict(i));
    return out;
  }

  py::list ops() const {
    py::list out;
    for (int32_t i = 0; i < program_.num_ops(); ++i) {
      const fb::Op* op = program_.fb().ops()->Get(i);
      py::dict d;
      d["name"] = op->name() ? op->name()->str() : std::string();
      d["kernel"] = runtime::kernel_name(op->kernel());
      d["paths"] = runtime::kernel_paths(program_, i);  // the kernel's code paths the op takes
      d["inputs"] = std::vector<int32_t>(op->inputs()->begin(), op->inputs()->end());
      d["outputs"] = std::vector<int32_t>(op->outputs()->begin(), op->outputs()->end());
      d["scratch_offset"] = op->scratch_offset();
      d["scratch_size"] = op->scratch_size();
      out.append(d);
    }
    return out;
  }

  py::list io(bool inputs) const {
    py::list out;
    const int32_t n = inputs ? program_.num_inputs() : program_.num_outputs();
    for (int32_t i = 0; i < n; ++i)
      out.append(tensor_dict(inputs ? program_.input_tensor(i) : program_.output_tensor(i)));
    return out;
  }

  // Runs once; profile collects (op index, seconds) per op. The kernels run with the GIL released,
  // on an arena of their own: runs from several Python threads are safe and overlap. The host
  // kernels' variant is read once, before the run (set_host_kernels from another thread changes
  // the next run, never this one).
  py::list run(const py::list& inputs, std::vector<double>* profile, runtime::RunStats* stats) {
    const std::vector<Tensor> ins = checked_inputs(inputs, "");
    std::vector<Tensor> outs;
    std::string error;
    {
      py::gil_scoped_release release;
      const runtime::HostKernels host = host_kernels();
      AlignedBytes arena = take_arena();
      error = execute_one(ins, arena.get(), host, &outs, profile, stats);
      release_arena(std::move(arena));
    }
    if (!error.empty()) throw GraphError(error);
    return to_numpy(outs);
  }

  // Runs every case (a list of inputs each) on up to `threads` threads (at most kMaxBatchThreads),
  // each on its own arena, with the GIL released; the outputs are those of run() on each case, in
  // order. One host kernels' variant, read before the first case, runs every case. A thread that
  // cannot be started is a RuntimeError, after the started ones have stopped.
  py::list run_batch(const py::list& cases, int64_t threads) {
    if (threads < 1) throw py::value_error("run_batch: threads = " + std::to_string(threads) + " must be >= 1");
    std::vector<std::vector<Tensor>> ins;
    for (size_t c = 0; c < cases.size(); ++c) {
      if (!py::isinstance<py::list>(cases[c]) && !py::isinstance<py::tuple>(cases[c]))
        throw py::value_error("run_batch: case " + std::to_string(c) + " must be a list of inputs");
      ins.push_back(checked_inputs(py::list(cases[c]), "case " + std::to_string(c) + ": "));
    }
    std::vector<std::vector<Tensor>> outs(ins.size());
    std::vector<std::string> errors(ins.size());
    const size_t n = std::min(ins.size(), static_cast<size_t>(std::min(threads, kMaxBatchThreads)));
    std::vector<AlignedBytes> arenas;  // taken with the GIL held: a failure raises here
    for (size_t t = 0; t < n; ++t) arenas.push_back(take_arena());
    std::string start_error;
    {
      py::gil_scoped_release release;
      const runtime::HostKernels host = host_kernels();
      std::atomic<size_t> next{0};
      const auto worker = [&](uint8_t* arena) {
        for (size_t c = next++; c < ins.size(); c = next++)
          errors[c] = execute_one(ins[c], arena, host, &outs[c], nullptr, nullptr);
      };
      std::vector<std::thread> pool;
      for (size_t t = 1; t < n && start_error.empty(); ++t) {
        try {
          pool.emplace_back(worker, arenas[t].get());
        } catch (const std::system_error& e) {
          start_error = "run_batch: threads = " + std::to_string(threads) + ": thread " + std::to_string(t + 1) +
                        " of " + std::to_string(n) + " could not be started (" + e.what() + "); ask for fewer threads";
          next = ins.size();  // the started threads stop after their current case
        }
      }
      if (n > 0 && start_error.empty()) worker(arenas[0].get());
      for (std::thread& t : pool) t.join();
    }
    for (AlignedBytes& arena : arenas) release_arena(std::move(arena));
    if (!start_error.empty()) throw std::runtime_error(start_error);
    for (size_t c = 0; c < errors.size(); ++c)
      if (!errors[c].empty()) throw GraphError("case " + std::to_string(c) + ": " + errors[c]);
    py::list result;
    for (const std::vector<Tensor>& o : outs) result.append(to_numpy(o));
    return result;
  }

  py::list bundled() const {
    py::list cases;
    const auto* list = program_.fb().bundled();
    if (!list) return cases;
    for (const fb::BundledCase* c : *list) {
      py::list ins, outs;
      for (int pass = 0; pass < 2; ++pass) {
        const auto* tensors = pass == 0 ? c->inputs() : c->expected_outputs();
        for (uint32_t i = 0; i < tensors->size(); ++i) {
          const int32_t index = pass == 0 ? program_.input_tensor(static_cast<int32_t>(i))
                                          : program_.output_tensor(static_cast<int32_t>(i));
          const runtime::TensorView v = program_.tensor(index, nullptr);
          TensorInfo info;
          info.dtype = static_cast<DType>(v.dtype);
          info.shape.assign(v.shape, v.shape + v.rank);
          Tensor t(info);
          const auto* data = tensors->Get(i)->data();
          if (data->size()) std::memcpy(t.raw(), data->data(), data->size());
          (pass == 0 ? ins : outs).append(tensor_to_numpy(t));
        }
      }
      cases.append(py::make_tuple(ins, outs));
    }
    return cases;
  }

 private:
  static runtime::TensorView contiguous_view(Tensor& t) {
    runtime::TensorView v;
    v.data = static_cast<uint8_t*>(t.raw());
    v.dtype = static_cast<runtime::DType>(t.dtype());
    v.rank = static_cast<int32_t>(t.shape().size());
    for (int32_t d = 0; d < v.rank; ++d) v.shape[d] = t.shape()[d];
    runtime::strides_for(v.shape, v.rank, nullptr, v.strides);
    return v;
  }
  static void copy_in(const Tensor& t, const runtime::TensorView& dst) {
    Tensor copy = t;
    runtime::copy_logical(contiguous_view(copy), dst);
  }
  static void copy_out(const runtime::TensorView& src, Tensor& t) {
    runtime::copy_logical(src, contiguous_view(t));
  }

  // The inputs as tensors of the program's dtypes and shapes (with the GIL held). Each array's
  // dtype and shape are checked before its data is copied.
  std::vector<Tensor> checked_inputs(const py::list& inputs, const std::string& where) const {
    if (static_cast<int32_t>(inputs.size()) != program_.num_inputs())
      throw GraphError(origin_ + ": " + where + "the program takes " + std::to_string(program_.num_inputs()) +
                       " inputs, got " + std::to_string(inputs.size()));
    std::vector<Tensor> tensors;
    for (int32_t i = 0; i < program_.num_inputs(); ++i) {
      const runtime::TensorView dst = program_.tensor(program_.input_tensor(i), nullptr);
      const std::string what = where + "input " + std::to_string(i);
      const py::array array = array_from_python(inputs[i], what);
      TensorInfo given;
      given.dtype = dtype_from_numpy(array.dtype(), what);
      given.shape.assign(array.shape(), array.shape() + array.ndim());
      const std::vector<int64_t> shape(dst.shape, dst.shape + dst.rank);
      if (static_cast<uint8_t>(given.dtype) != static_cast<uint8_t>(dst.dtype) || given.shape != shape)
        throw GraphError(origin_ + ": " + what + " is " + info_to_string(given) + ", the program takes " +
                         dtype_name(static_cast<DType>(dst.dtype)) + shape_to_string(shape));
      tensors.push_back(tensor_from_array(array, what));
    }
    return tensors;
  }

  // Copies in, executes on `arena`, copies out; no Python calls (runs without the GIL) and no
  // exception out (a worker thread's would terminate). Returns the error message, empty on success.
  std::string execute_one(const std::vector<Tensor>& inputs, uint8_t* arena, const runtime::HostKernels& host,
                          std::vector<Tensor>* outputs, std::vector<double>* profile,
                          runtime::RunStats* stats) const {
    try {
      return execute_or_throw(inputs, arena, host, outputs, profile, stats);
    } catch (const std::exception& e) {  // bad_alloc of an output, say
      return origin_ + ": " + e.what();
    }
  }

  std::string execute_or_throw(const std::vector<Tensor>& inputs, uint8_t* arena, const runtime::HostKernels& host,
                               std::vector<Tensor>* outputs, std::vector<double>* profile,
                               runtime::RunStats* stats) const {
    for (int32_t i = 0; i < program_.num_inputs(); ++i)
      copy_in(inputs[static_cast<size_t>(i)], program_.tensor(program_.input_tensor(i), arena));
    struct Clock {
      std::vector<double>* times;
      std::chrono::steady_clock::time_point start;
    } clock{profile, {}};
    runtime::Profiler profiler;
    if (profile) {
      profile->assign(static_cast<size_t>(program_.num_ops()), 0.0);
      profiler.context = &clock;
      profiler.hook = [](void* context, int32_t op, uint8_t, bool after) {
        auto* c = static_cast<Clock*>(context);
        const auto now = std::chrono::steady_clock::now();
        if (after) (*c->times)[static_cast<size_t>(op)] = std::chrono::duration<double>(now - c->start).count();
        else c->start = now;
      };
    }
    const runtime::Status status =
        runtime::execute(program_, arena, program_.required_arena_size(), profile ? &profiler : nullptr, stats,
                         &host);
    if (!status.ok()) return program::status_message(status, buffer_.get(), size_, origin_);
    outputs->clear();
    for (int32_t i = 0; i < program_.num_outputs(); ++i) {
      const runtime::TensorView src = program_.tensor(program_.output_tensor(i), arena);
      TensorInfo info;
      info.dtype = static_cast<DType>(src.dtype);
      info.shape.assign(src.shape, src.shape + src.rank);
      Tensor t(info);
      copy_out(src, t);
      outputs->push_back(std::move(t));
    }
    return {};
  }

  static py::list to_numpy(const std::vector<Tensor>& tensors) {
    py::list out;
    for (const Tensor& t : tensors) out.append(tensor_to_numpy(t));
    return out;
  }

  // Arenas are pooled: each concurrent run takes one and gives it back. Each holds the program's
  // arena and the scratch the host's kernels need beyond the program's plan. A new arena is zeroed:
  // the loader proves a run reads only bytes it wrote, and no run sees the heap's old contents.
  AlignedBytes new_arena() const {
    const size_t bytes = program_.required_arena_size();
    try {
      return aligned_bytes(bytes);
    } catch (const std::bad_alloc&) {
      throw GraphError(origin_ + ": program: arena_size = " + std::to_string(program_.arena_size()) +
                       " (" + std::to_string(bytes) + " bytes with the host kernels' scratch): cannot be allocated on the host");
    }
  }
  AlignedBytes take_arena() {
    {
      std::lock_guard<std::mutex> lock(arenas_mutex_);
      if (!arenas_.empty()) {
        AlignedBytes arena = std::move(arenas_.back());
        arenas_.pop_back();
        return arena;
      }
    }
    return new_arena();
  }
  void release_arena(AlignedBytes arena) {
    std::lock_guard<std::mutex> lock(arenas_mutex_);
    arenas_.push_back(std::move(arena));
  }

 public:
  // For tests: the bytes of the arena the next run takes (a new one when none is pooled).
  py::bytes next_arena_bytes() {
    AlignedBytes arena = take_arena();
    py::bytes bytes(reinterpret_cast<const char*>(arena.get()), program_.required_arena_size());
    release_arena(std::move(arena));
    return bytes;
  }

 private:

  // Each op's weights packed for one variant of the host CPU's kernels (runtime::host_pack), in
  // one buffer; read-only once made, so concurrent runs share it.
  struct Packing {
    PackedBytes bytes;
    std::vector<const void*> ops;  // per op, its packed weights or null
  };

  // The weights packed for `variant`, made on the first run of that variant and kept with the
  // program (a run of one variant never gets another's packing).
  const Packing& packing(HostVariant variant) {
    std::lock_guard<std::mutex> lock(packings_mutex_);
    std::unique_ptr<Packing>& made = packings_[static_cast<size_t>(variant)];
    if (made) return *made;
    auto p = std::make_unique<Packing>();
    std::vector<size_t> offsets(static_cast<size_t>(program_.num_ops()));
    size_t total = 0;
    for (int32_t i = 0; i < program_.num_ops(); ++i) {
      offsets[static_cast<size_t>(i)] = total;
      total += (runtime::host_pack(program_, i, variant, nullptr) + kPackAlignment - 1) / kPackAlignment *
               kPackAlignment;
    }
    p->ops.assign(static_cast<size_t>(program_.num_ops()), nullptr);
    if (total > 0) {
      p->bytes = PackedBytes(static_cast<uint8_t*>(::operator new(total, std::align_val_t(kPackAlignment))));
      for (int32_t i = 0; i < program_.num_ops(); ++i) {
        uint8_t* at = p->bytes.get() + offsets[static_cast<size_t>(i)];
        if (runtime::host_pack(program_, i, variant, at) > 0) p->ops[static_cast<size_t>(i)] = at;
      }
    }
    made = std::move(p);
    return *made;
  }

  // The host kernels of one run: the variant in use, read once, and the weights packed for it.
  runtime::HostKernels host_kernels() {
    const HostVariant variant = host_variant();
    return runtime::HostKernels{variant, packing(variant).ops.data()};
  }

  std::string origin_;
  AlignedBytes buffer_;
  size_t size_ = 0;
  runtime::Program program_;
  std::vector<uint64_t> op_state_;  // Program::init_op_state's memory (8-byte aligned)
  std::mutex arenas_mutex_;
  std::vector<AlignedBytes> arenas_;
  std::mutex packings_mutex_;
  std::array<std::unique_ptr<Packing>, 3> packings_;  // by HostVariant
};

}  // namespace

void bind_program(py::module_& m) {
  m.def(
      "write_program",
      [](const GraphPtr& g, const std::string& target, const py::object& layout, const py::list& bundled,
         bool preserve_inputs) {
        program::WriteOptions options;
        options.target = target;
        for (auto item : bundled) {
          auto pair = item.cast<py::tuple>();
          program::BundledCase c;
          for (auto x : pair[0].cast<py::list>()) c.inputs.push_back(tensor_from_python(x, "bundled input"));
          for (auto x : pair[1].cast<py::list>()) c.expected_outputs.push_back(tensor_from_python(x, "bundled output"));
          options.bundled.push_back(std::move(c));
        }
        const Isa isa = parse_target(target).isa;
        program::ArenaLayout arena;
        PlanOptions plan_options;
        plan_options.preserve_inputs = preserve_inputs;
        if (layout.is_none()) arena = program::planned_layout(*g, isa, nullptr, plan_options);
        else if (py::isinstance<py::str>(layout) && layout.cast<std::string>() == "sequential")
          arena = program::sequential_layout(*g, isa);
        else arena = layout_from_python(g, layout);
        const std::string bytes = program::write_program(*g, arena, options);
        return py::bytes(bytes);
      },
      py::arg("graph"), py::arg("target"), py::arg("layout") = py::none(), py::arg("bundled") = py::list(),
      py::arg("preserve_inputs") = false,
      "Lowered graph -> program bytes. layout: None (the memory planner's plan; preserve_inputs: no op "
      "writes over a graph input), 'sequential' (no reuse), or {'values': {value id: offset}, 'scratch': {node index: (offset, size)}, 'arena_size': n}.");
  m.def("planned_layout",
        [](const GraphPtr& g, const std::string& target, bool preserve_inputs) {
          int64_t extra = 0;
          PlanOptions options;
          options.preserve_inputs = preserve_inputs;
          const program::ArenaLayout layout = program::planned_layout(*g, parse_target(target).isa, &extra, options);
          const MemoryPlan plan = plan_memory(*g, options);
          py::dict d;
          d["arena_size"] = layout.arena_size;
          d["plan_arena_size"] = plan.arena_size;
          d["lower_bound"] = plan.lower_bound;
          d["policy"] = plan.policy;
          d["extra_scratch"] = extra;
          return d;
        },
        py::arg("graph"), py::arg("target"), py::arg("preserve_inputs") = false,
        "The planner's arena for a graph: plan size, lower bound, policy, and the extra scratch region "
        "for kernels whose scratch the graph does not declare.");
  m.def("make_io_int8", [](const GraphPtr& g) { program::make_io_int8(*g); },
        "Makes the graph take and give int8 at its quantize / dequantize boundary (to_program's io='int8'); "
        "ValueError (GraphError) names an input or output that is not quantized there.");
  m.def("make_io_int16", [](const GraphPtr& g) { program::make_io_int16(*g); },
        "Makes the graph take and give int16 (and int8) at its quantize / dequantize boundary (to_program's "
        "io='int16'); ValueError (GraphError) names an input or output that is not quantized there.");
  m.def("check_runnable", [](const GraphPtr& g) { program::check_runnable(*g); },
        "Raises NotImplementedError listing every node a program cannot run.");
  m.def("program_problems",
        [](const GraphPtr& g) {
          py::list out;
          for (const program::ProgramProblem& p : program::program_problems(*g)) {
            py::dict d;
            d["node"] = p.node;
            d["op"] = p.op;
            d["source"] = p.source;
            d["reason"] = p.reason;
            d["message"] = program::problem_line(p);
            out.append(d);
          }
          return out;
        },
        "Every node a program cannot hold, in order: [{node, op, source, reason, message}].");
  m.def("required_scratch",
        [](const GraphPtr& g, const std::string& target) {
          std::vector<int64_t> out;
          for (NodeId id : g->order()) out.push_back(program::required_scratch(*g, id, parse_target(target).isa));
          return out;
        },
        "Scratch bytes per node (in execution order) the runtime's kernels need.");

  py::class_<LoadedProgram>(m, "LoadedProgram", "A verified program on the host runtime.")
      .def(py::init<const py::bytes&, const std::string&>(), py::arg("data"), py::arg("origin") = "program")
      .def_property_readonly("arena_size", [](const LoadedProgram& p) { return p.program().arena_size(); })
      .def_property_readonly("required_arena_size",
                             [](const LoadedProgram& p) { return p.program().required_arena_size(); })
      .def_property_readonly("constant_size", [](const LoadedProgram& p) { return p.program().constant_size(); })
      .def_property_readonly("op_state_size", [](const LoadedProgram& p) { return p.program().op_state_size(); },
                             "Bytes of per-op state (each op's params decoded once) a firmware gives "
                             "Program::init_op_state beside the arena; the same on every platform.")
      .def_property_readonly("num_ops", [](const LoadedProgram& p) { return p.program().num_ops(); })
      .def_property_readonly("float_ops", [](const LoadedProgram& p) { return p.program().float_ops(); })
      .def_property_readonly("target", [](const LoadedProgram& p) {
        const auto* t = p.program().fb().target();
        return t ? t->str() : std::string();
      })
      .def_property_readonly("isa", [](const LoadedProgram& p) { return std::string(isa_name(p.program().isa())); })
      .def_property_readonly("inputs", [](const LoadedProgram& p) { return p.io(true); })
      .def_property_readonly("outputs", [](const LoadedProgram& p) { return p.io(false); })
      .def("tensors", &LoadedProgram::tensors)
      .def("ops", &LoadedProgram::ops)
      .def("bundled", &LoadedProgram::bundled)
      .def("run", [](LoadedProgram& p, const py::list& inputs) { return p.run(inputs, nullptr, nullptr); })
      .def("_next_arena_bytes", &LoadedProgram::next_arena_bytes,
           "For tests: the bytes of the arena the next run takes.")
      .def("run_batch", &LoadedProgram::run_batch, py::arg("cases"), py::arg("threads"),
           "Runs each case (a list of inputs) on up to `threads` threads (at most 256), one arena each, with "
           "the GIL released; returns each case's outputs, in order. RuntimeError if a thread cannot start.")
      .def("run_profiled", [](LoadedProgram& p, const py::list& inputs) {
        std::vector<double> times;
        runtime::RunStats stats;
        py::list outs = p.run(inputs, &times, &stats);
        py::dict d;
        d["ops"] = stats.ops;
        d["float_ops"] = stats.float_ops;
        d["seconds"] = times;
        return py::make_tuple(outs, d);
      });
}

}  // namespace cortexm::bindings
