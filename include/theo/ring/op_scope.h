#pragma once
// OpScope: a label for the backend ops the calling thread issues while it lives, e.g. the stages
// of a key switch ("ModUp", "KeyMult", "ModDown") inside a caller's "Boot/CoeffToSlot". Scopes
// nest: names join with '/'. The scheme layers set them; observers outside the library (the
// traffic recorder of model/) read current_op_scope() when an op is issued.
//
// Scopes are thread-local and cost one branch while no observer is registered anywhere.

#include <atomic>
#include <string>
#include <string_view>

namespace theo {

namespace op_scope_detail {
// Registered observers in the process: OpScope keeps no path while it is 0.
inline std::atomic<int> g_observers{0};
}  // namespace op_scope_detail

// An observer that wants scope paths registers for as long as it wants them.
inline void register_op_scope_observer() {
  op_scope_detail::g_observers.fetch_add(1, std::memory_order_relaxed);
}
inline void unregister_op_scope_observer() {
  op_scope_detail::g_observers.fetch_sub(1, std::memory_order_relaxed);
}

// RAII scope label for the calling thread. `name` must outlive the scope only for the constructor
// call (it is copied when an observer is registered).
class OpScope {
 public:
  explicit OpScope(std::string_view name) {
    if (op_scope_detail::g_observers.load(std::memory_order_relaxed) != 0) push(name);
  }
  ~OpScope() {
    if (pushed_) pop();
  }
  OpScope(const OpScope&) = delete;
  OpScope& operator=(const OpScope&) = delete;

 private:
  void push(std::string_view name);
  void pop();
  std::size_t restore_size_ = 0;
  bool pushed_ = false;
};

// The calling thread's scope path ("" outside every scope).
const std::string& current_op_scope();

}  // namespace theo
