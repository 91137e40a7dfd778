// A non-owning reference to a callable, for callbacks that run before the call that takes them
// returns (a loop body handed to a thread pool, a re-scoring hook). Unlike std::function it
// never copies the callable and never allocates: a per-frame loop stays allocation-free.
// The callable must outlive the FunctionRef (pass lambdas straight into the call).
#pragma once
#include <type_traits>
#include <utility>

namespace parvis {

template <class Signature> class FunctionRef;

template <class R, class... Args> class FunctionRef<R(Args...)> {
 public:
  template <class F, class = std::enable_if_t<!std::is_same_v<std::decay_t<F>, FunctionRef> &&
                                              std::is_invocable_r_v<R, F&, Args...>>>
  FunctionRef(F&& f)  // NOLINT: implicit, like std::function
      : object_(const_cast<void*>(static_cast<const void*>(&f))),
        call_([](void* o, Args... args) -> R {
          return (*static_cast<std::remove_reference_t<F>*>(o))(std::forward<Args>(args)...);
        }) {}

  R operator()(Args... args) const { return call_(object_, std::forward<Args>(args)...); }

 private:
  void* object_;
  R (*call_)(void*, Args...);
};

}  // namespace parvis
