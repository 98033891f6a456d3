// Context._trace_begin / _trace_end: the op trace ("theo-trace" JSON, docs/trace-format.md) of
// whatever runs on a Context made with trace=True, for theodosian.sim.tracing.record.

#include "bindings.h"
#include "theo/model/traffic_trace.h"

namespace theopy {

void bind_trace(nb::class_<WContext>& context) {
  context
      .def(
          "_trace_begin",
          [](WContext& c, const std::string& label) {
            Session& s = *c.s;
            if (!s.recorder)
              throw theo::ParameterError(
                  "tracing needs a Context made with trace=True (Context(..., trace=True))");
            if (s.trace_scope) throw theo::ParameterError("a trace is already running");
            s.recorder->clear();
            s.trace_label = label;
            s.recorder->set_enabled(true);
            if (!label.empty()) s.trace_scope = std::make_unique<theo::OpScope>(label);
          },
          "label"_a, "Starts recording the ops of this context (under the scope `label`).")
      .def(
          "_trace_end",
          [](WContext& c, const std::string& workload) {
            Session& s = *c.s;
            if (!s.recorder || !s.recorder->enabled())
              throw theo::ParameterError("no trace is running (call _trace_begin first)");
            s.ctx->backend().synchronize();
            s.trace_scope.reset();
            s.recorder->set_enabled(false);
            const theo::Context& ctx = *s.ctx;
            theo::TraceInfo info;
            info.workload = workload.empty() ? s.trace_label : workload;
            info.preset = ctx.params().name;
            info.backend = ctx.backend().kind() == theo::BackendKind::kCuda ? "cuda" : "cpu";
            info.device = ctx.backend().name();
            info.command = "theodosian.sim.tracing.record";
            info.n = ctx.n();
            info.dnum = ctx.dnum();
            info.alpha = ctx.alpha();
            info.max_level = ctx.max_level();
            const std::vector<theo::TrafficRecord> records = s.recorder->records();
            s.recorder->clear();
            return theo::trace_json(records, info);
          },
          "workload"_a = "",
          "Stops recording; returns the trace document (JSON text) of the ops since "
          "_trace_begin.");
}

}  // namespace theopy
