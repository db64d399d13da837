// PROF_SCOPE as a torch RecordFunction USER_SCOPE entry: seen by observers in nesting order with our names,
// absent (and free of allocations) when nobody listens. CPU only; runs against any LibTorch.
#include <scopeprof.hpp>

#include <ATen/record_function.h>
#include <doctest/doctest.h>

#include <atomic>
#include <cstdlib>
#include <mutex>
#include <new>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

// Counting allocations on this thread: the no-listener path must not allocate.
namespace {
thread_local long t_allocations = 0;
}
void* operator new(std::size_t n) {
  ++t_allocations;
  if (void* p = std::malloc(n ? n : 1)) return p;
  throw std::bad_alloc();
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }

namespace {

struct observed {
  bool start;
  std::string name;
  at::RecordScope scope;
  std::thread::id thread;
};

std::mutex g_mu;
std::vector<observed> g_seen;

std::unique_ptr<at::ObserverContext> on_start(const at::RecordFunction& fn) {
  std::lock_guard<std::mutex> lock(g_mu);
  g_seen.push_back({true, fn.name(), fn.scope(), std::this_thread::get_id()});
  return nullptr;
}
void on_end(const at::RecordFunction& fn, at::ObserverContext*) {
  std::lock_guard<std::mutex> lock(g_mu);
  g_seen.push_back({false, fn.name(), fn.scope(), std::this_thread::get_id()});
}

std::vector<observed> take_seen() {
  std::lock_guard<std::mutex> lock(g_mu);
  std::vector<observed> out;
  out.swap(g_seen);
  return out;
}

// Registers an observer of USER_SCOPE entries for its lifetime.
struct user_scope_observer {
  at::CallbackHandle handle;
  explicit user_scope_observer(bool global) {
    take_seen();
    auto cb = at::RecordFunctionCallback(on_start, on_end).scopes({at::RecordScope::USER_SCOPE});
    handle = global ? at::addGlobalCallback(cb) : at::addThreadLocalCallback(cb);
  }
  ~user_scope_observer() { at::removeCallback(handle); }
};

std::string sequence(const std::vector<observed>& seen) {
  std::string s;
  for (const observed& o : seen) s += (o.start ? "+" : "-") + o.name + " ";
  return s;
}

void nested_work() {
  PROF_SCOPE("outer");
  {
    PROF_SCOPE("inner");
    PROF_SCOPE_DYN(std::string("inner.dynamic"));
  }
  PROF_SCOPE_HOST("sibling");
}

}  // namespace

TEST_CASE("torch hook: an observer sees every scope as a USER_SCOPE entry, in nesting order, with its name") {
  scopeprof::set_enabled(true);
  SUBCASE("thread-local observer") {
    user_scope_observer obs(false);
    nested_work();
    const std::vector<observed> seen = take_seen();
    CHECK(sequence(seen) == "+outer +inner +inner.dynamic -inner.dynamic -inner +sibling -sibling -outer ");
    for (const observed& o : seen) CHECK(o.scope == at::RecordScope::USER_SCOPE);
  }
  SUBCASE("an exception unwinding through nested scopes closes every entry in order") {
    user_scope_observer obs(false);
    try {
      PROF_SCOPE("a");
      PROF_SCOPE("b");
      throw std::runtime_error("unwind");
    } catch (const std::runtime_error&) {
    }
    CHECK(sequence(take_seen()) == "+a +b -b -a ");
  }
  SUBCASE("a global observer sees other threads' scopes; a thread-local one only its own thread's") {
    {
      user_scope_observer obs(true);
      std::thread t([] { PROF_SCOPE("worker"); });
      t.join();
      const std::vector<observed> seen = take_seen();
      REQUIRE(seen.size() == 2);
      CHECK(seen[0].name == "worker");
      CHECK(seen[0].thread != std::this_thread::get_id());
    }
    {
      user_scope_observer obs(false);
      std::thread t([] { PROF_SCOPE("worker"); });
      t.join();
      CHECK(take_seen().empty());
    }
  }
  SUBCASE("the host time of the scope is still recorded") {
    scopeprof::reset();
    user_scope_observer obs(false);
    nested_work();
    const scopeprof::report r = scopeprof::collect();
    CHECK(r.find("outer") != nullptr);
    CHECK(r.find("inner.dynamic") != nullptr);
  }
}

TEST_CASE("torch hook: nothing is created when nobody listens") {
  scopeprof::set_enabled(true);
  nested_work();  // registers the sites and attaches this thread
  SUBCASE("no observer: no entry, no allocation in steady state") {
    take_seen();
    CHECK_FALSE(at::getStepCallbacksUnlessEmpty(at::RecordScope::USER_SCOPE).has_value());
    auto quiet = [](int n) {
      for (int i = 0; i < n; ++i) {
        PROF_SCOPE("quiet");
        PROF_SCOPE("quiet.inner");
      }
    };
    // Register the sites and grow this thread's record chunks to full size first: not the hook's cost.
    quiet(10000);
    const long before = t_allocations;
    quiet(1000);
    const long allocations = t_allocations - before;
    // 2000 records need a few new record chunks at most (each chunk and its slot in the thread's chunk
    // list); a name copied or an entry built per scope would show up as thousands.
    CHECK(allocations <= 16);
    CHECK(take_seen().empty());
  }
  SUBCASE("an observer of other scopes only (operators): no USER_SCOPE entry") {
    take_seen();
    auto cb = at::RecordFunctionCallback(on_start, on_end).scopes({at::RecordScope::FUNCTION});
    const at::CallbackHandle h = at::addThreadLocalCallback(cb);
    nested_work();
    at::removeCallback(h);
    CHECK(take_seen().empty());
  }
  SUBCASE("a disabled observer: no entry") {
    user_scope_observer obs(false);
    at::disableCallback(obs.handle);
    nested_work();
    at::reenableCallback(obs.handle);
    CHECK(take_seen().empty());
    nested_work();  // and it comes back when re-enabled
    CHECK(take_seen().size() == 8);
  }
  SUBCASE("scopeprof switched off at run time: no entry even with an observer") {
    user_scope_observer obs(false);
    scopeprof::set_enabled(false);
    nested_work();
    scopeprof::set_enabled(true);
    CHECK(take_seen().empty());
  }
  SUBCASE("the allocation counter itself works (a listener's entries copy the name)") {
    user_scope_observer obs(false);
    const long before = t_allocations;
    for (int i = 0; i < 100; ++i) {
      PROF_SCOPE("listened.with.a.name.longer.than.small.strings");
    }
    CHECK(t_allocations - before >= 100);
    CHECK(take_seen().size() == 200);
  }
}
