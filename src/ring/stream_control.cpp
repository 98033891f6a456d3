// StreamControl's checked entry points and refusals, shared by every backend so that a misuse
// found on the CPU is the one the GPU would hit.

#include "theo/ring/stream_control.h"

#include <string>
#include <utility>

#include "theo/errors.h"

namespace theo {

void StreamControl::refuse_while_capturing(std::string_view op) const {
  if (capturing())
    throw BackendError(std::string(op) +
                       " is not allowed while capturing (it needs the host at capture time; do it "
                       "before or after the capture)");
}

void StreamControl::refuse_while_forked(std::string_view op) const {
  if (forked())
    throw BackendError(std::string(op) +
                       " is not allowed between fork() and join() (do it before the fork or "
                       "after the join)");
}

void StreamControl::begin_capture(std::shared_ptr<CaptureWorkspace> workspace) {
  if (capturing()) throw BackendError("begin_capture: the backend is already capturing");
  refuse_while_forked("begin_capture");
  do_begin_capture(std::move(workspace));
}

std::unique_ptr<CapturedWork> StreamControl::end_capture() {
  if (!capturing()) throw BackendError("end_capture: the backend is not capturing");
  refuse_while_forked("end_capture");
  return do_end_capture();
}

}  // namespace theo
