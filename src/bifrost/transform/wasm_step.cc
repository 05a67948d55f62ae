// A custom step run by a sandboxed WASM guest (wasmtime): the rows are written into the
// guest's memory as an Arrow IPC stream (README, "WASM guests"), the guest writes its
// reply the same way. Each run gets a fresh instance in a fresh store with a
// fuel budget, a wall-clock deadline (epoch interruption) and a memory cap, so a guest
// that traps, loops or allocates without bound fails the round and nothing else.
#include <arrow/api.h>
#include <wasmtime.h>

#include <cctype>
#include <cstdio>
#include <condition_variable>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <sstream>
#include <thread>

#include "bifrost/transform/external_step.h"
#include "bifrost/transform/wasm_ipc.h"
#include "skade/table/arrow_internal.h"

namespace bifrost {
namespace {

// wasmtime's messages span lines ("...\n\nCaused by:\n    ..."): one line for ours.
std::string TakeMessage(wasmtime_error_t* error) {
  wasm_byte_vec_t m;
  wasmtime_error_message(error, &m);
  std::istringstream lines(std::string(m.data, m.size));
  wasm_byte_vec_delete(&m);
  wasmtime_error_delete(error);
  std::string out, line;
  while (std::getline(lines, line)) {
    line.erase(0, line.find_first_not_of(" \t"));
    while (!line.empty() && (line.back() == ' ' || line.back() == '\0')) line.pop_back();
    if (!line.empty() && line != "Caused by:") out += (out.empty() ? "" : ": ") + line;
  }
  return out;
}

// Increments the engine's epoch once `limit` passes, unless Disarm comes first.
class Watchdog {
 public:
  Watchdog(wasm_engine_t* engine, std::chrono::milliseconds limit)
      : thread_([this, engine, limit] {
          std::unique_lock lock(mu_);
          if (!cv_.wait_for(lock, limit, [this] { return done_; }))
            wasmtime_engine_increment_epoch(engine);
        }) {}
  ~Watchdog() {
    {
      std::lock_guard lock(mu_);
      done_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool done_ = false;
  std::thread thread_;
};

constexpr uintmax_t kMaxModuleBytes = uintmax_t{256} << 20;

class WasmRunner : public RowRunner {
 public:
  WasmRunner(std::string path, uint64_t fuel, std::chrono::milliseconds time, int64_t memory)
      : path_(std::move(path)), fuel_(fuel), time_(time), memory_(memory) {}
  ~WasmRunner() override {
    if (module_) wasmtime_module_delete(module_);
    if (engine_) wasm_engine_delete(engine_);
  }

  Status Load() {
    // Only a regular file of bounded size: a FIFO or /dev/zero would never end.
    std::error_code ec;
    if (!std::filesystem::is_regular_file(path_, ec))
      return skade::NotFound("WASM module '" + path_ + "' cannot be read (not a file)");
    if (auto size = std::filesystem::file_size(path_, ec); ec || size > kMaxModuleBytes)
      return skade::InvalidArgument("WASM module '" + path_ + "' is larger than " +
                                    std::to_string(kMaxModuleBytes >> 20) + " MiB");
    std::ifstream in(path_, std::ios::binary);
    if (!in) return skade::NotFound("WASM module '" + path_ + "' cannot be read");
    std::stringstream ss;
    ss << in.rdbuf();
    std::string bytes = ss.str();
    wasm_config_t* config = wasm_config_new();
    wasmtime_config_consume_fuel_set(config, true);
    wasmtime_config_epoch_interruption_set(config, true);
    engine_ = wasm_engine_new_with_config(config);
    if (auto* e = wasmtime_module_new(engine_, reinterpret_cast<const uint8_t*>(bytes.data()),
                                      bytes.size(), &module_))
      return skade::InvalidArgument("WASM module '" + path_ + "' does not compile: " + TakeMessage(e));
    // A guest reaches nothing but its own memory: no imports at all.
    wasm_importtype_vec_t imports;
    wasmtime_module_imports(module_, &imports);
    std::string imported;
    for (size_t i = 0; i < imports.size; ++i) {
      const wasm_name_t* mod = wasm_importtype_module(imports.data[i]);
      const wasm_name_t* name = wasm_importtype_name(imports.data[i]);
      imported += (imported.empty() ? "" : ", ") + std::string(mod->data, mod->size) + "." +
                  std::string(name->data, name->size);
    }
    wasm_importtype_vec_delete(&imports);
    if (!imported.empty())
      return skade::InvalidArgument("WASM module '" + path_ + "' imports " + imported +
                                    "; a guest may import nothing");
    wasm_exporttype_vec_t exports;
    wasmtime_module_exports(module_, &exports);
    std::set<std::string> names;
    for (size_t i = 0; i < exports.size; ++i) {
      const wasm_name_t* name = wasm_exporttype_name(exports.data[i]);
      names.emplace(name->data, name->size);
    }
    wasm_exporttype_vec_delete(&exports);
    for (const char* need : {"memory", "bifrost_alloc", "bifrost_transform"})
      if (!names.contains(need))
        return skade::InvalidArgument("WASM module '" + path_ + "' does not export '" + need +
                                      "' (a guest exports memory, bifrost_alloc, bifrost_transform)");
    return {};
  }

  Result<std::shared_ptr<arrow::Table>> Run(const std::shared_ptr<arrow::Table>& rows) override {
    SKADE_ASSIGN_OR_RETURN(auto input, EncodeGuestInput(*rows));
    wasmtime_store_t* store = wasmtime_store_new(engine_, nullptr, nullptr);
    wasmtime_store_limiter(store, memory_, -1, 1, -1, 1);
    auto result = RunIn(store, *input);
    wasmtime_store_delete(store);
    return result;
  }

 private:
  Result<std::shared_ptr<arrow::Table>> RunIn(wasmtime_store_t* store, const arrow::Buffer& input) {
    wasmtime_context_t* ctx = wasmtime_store_context(store);
    const auto n = static_cast<uint64_t>(input.size());
    if (auto* e = wasmtime_context_set_fuel(ctx, fuel_))
      return skade::Internal("setting the guest's fuel: " + TakeMessage(e));
    wasmtime_context_set_epoch_deadline(ctx, 1);
    Watchdog watchdog(engine_, time_);
    wasmtime_instance_t instance;
    wasm_trap_t* trap = nullptr;
    if (auto* e = wasmtime_instance_new(ctx, module_, nullptr, 0, &instance, &trap))
      return skade::InvalidArgument("the guest cannot start: " + TakeMessage(e));
    if (trap) return Trapped(trap, "starting");
    wasmtime_extern_t memory, alloc, transform;
    auto get = [&](const char* name, wasmtime_extern_t* out) {
      return wasmtime_instance_export_get(ctx, &instance, name, std::strlen(name), out);
    };
    if (!get("memory", &memory) || memory.kind != WASMTIME_EXTERN_MEMORY ||
        !get("bifrost_alloc", &alloc) || alloc.kind != WASMTIME_EXTERN_FUNC ||
        !get("bifrost_transform", &transform) || transform.kind != WASMTIME_EXTERN_FUNC)
      return skade::InvalidArgument(
          "the guest's exports memory, bifrost_alloc, bifrost_transform are not a memory and two "
          "functions");
    // Guest calls: (i32) -> i32 and (i32, i32) -> i64.
    wasmtime_val_t args[2], result;
    args[0].kind = WASMTIME_I32;
    args[0].of.i32 = static_cast<int32_t>(n);
    if (auto* e = wasmtime_func_call(ctx, &alloc.of.func, args, 1, &result, 1, &trap))
      return skade::InvalidArgument("calling bifrost_alloc: " + TakeMessage(e));
    if (trap) return Trapped(trap, "bifrost_alloc");
    uint32_t at = static_cast<uint32_t>(result.of.i32);
    size_t size = wasmtime_memory_data_size(ctx, &memory.of.memory);
    if (result.kind != WASMTIME_I32 || at == 0 || uint64_t{at} + n > size)
      return skade::InvalidArgument("the guest could not allocate " + std::to_string(n) +
                                    " bytes for the rows (memory limit " +
                                    std::to_string(memory_ >> 20) + " MiB)");
    std::memcpy(wasmtime_memory_data(ctx, &memory.of.memory) + at, input.data(), n);
    args[0].of.i32 = static_cast<int32_t>(at);
    args[1].kind = WASMTIME_I32;
    args[1].of.i32 = static_cast<int32_t>(n);
    if (auto* e = wasmtime_func_call(ctx, &transform.of.func, args, 2, &result, 1, &trap))
      return skade::InvalidArgument("calling bifrost_transform: " + TakeMessage(e));
    if (trap) {
      // A guest that hit the memory cap mostly traps soon after its allocation failed.
      char note[96];
      std::snprintf(note, sizeof note, " (memory in use: %.1f of the %lld MiB limit)",
                    static_cast<double>(wasmtime_memory_data_size(ctx, &memory.of.memory)) / (1 << 20),
                    static_cast<long long>(memory_ >> 20));
      return Trapped(trap, "bifrost_transform", note);
    }
    if (result.kind != WASMTIME_I64)
      return skade::InvalidArgument("bifrost_transform must return an i64 (pointer << 32 | length)");
    auto packed = static_cast<uint64_t>(result.of.i64);
    uint64_t out = packed >> 32, len = packed & 0xffffffffu;
    if (packed == 0) return skade::InvalidArgument("the guest reported an error" + GuestError(ctx, instance, memory));
    // Memory may have grown during the call: read its extent again.
    size = wasmtime_memory_data_size(ctx, &memory.of.memory);
    if (out + len > size)
      return skade::InvalidArgument("the guest's reply (" + std::to_string(len) + " bytes at " +
                                    std::to_string(out) + ") lies outside its memory (" +
                                    std::to_string(size) + " bytes)");
    return DecodeGuestReply(wasmtime_memory_data(ctx, &memory.of.memory) + out, len);
  }

  // The optional `bifrost_error` export names what went wrong (a NUL-terminated string).
  std::string GuestError(wasmtime_context_t* ctx, wasmtime_instance_t& instance,
                         wasmtime_extern_t& memory) {
    wasmtime_extern_t fn;
    if (!wasmtime_instance_export_get(ctx, &instance, "bifrost_error", 13, &fn) ||
        fn.kind != WASMTIME_EXTERN_FUNC)
      return "";
    wasmtime_val_t result;
    wasm_trap_t* trap = nullptr;
    if (auto* e = wasmtime_func_call(ctx, &fn.of.func, nullptr, 0, &result, 1, &trap)) {
      wasmtime_error_delete(e);
      return "";
    }
    if (trap) {
      wasm_trap_delete(trap);
      return "";
    }
    if (result.kind != WASMTIME_I32) return "";
    const uint8_t* base = wasmtime_memory_data(ctx, &memory.of.memory);
    size_t size = wasmtime_memory_data_size(ctx, &memory.of.memory);
    auto at = static_cast<uint32_t>(result.of.i32);
    std::string msg;
    for (size_t i = at; i < size && base[i] != 0 && msg.size() < 500; ++i)
      msg += static_cast<char>(base[i]);
    return msg.empty() ? "" : ": " + msg;
  }

  Result<std::shared_ptr<arrow::Table>> Trapped(wasm_trap_t* trap, const char* during,
                                                const std::string& note = "") {
    wasmtime_trap_code_t code;
    bool has_code = wasmtime_trap_code(trap, &code);
    wasm_byte_vec_t m;
    wasm_trap_message(trap, &m);
    std::string message(m.data, m.size);
    wasm_byte_vec_delete(&m);
    wasm_trap_delete(trap);
    // wasmtime puts a backtrace first and the cause ("wasm trap: ...") last.
    while (!message.empty() &&
           (message.back() == '\0' || std::isspace(static_cast<unsigned char>(message.back()))))
      message.pop_back();
    if (auto nl = message.rfind('\n'); nl != std::string::npos) message.erase(0, nl + 1);
    message.erase(0, message.find_first_not_of(" \t0123456789:"));  // "    1: wasm trap: ..."
    if (has_code && code == WASMTIME_TRAP_CODE_OUT_OF_FUEL)
      return skade::InvalidArgument("the guest ran out of fuel (" + std::to_string(fuel_) +
                                    ") in " + during);
    if (has_code && code == WASMTIME_TRAP_CODE_INTERRUPT)
      return skade::InvalidArgument("the guest ran past its time limit (" +
                                    std::to_string(time_.count()) + " ms) in " + during);
    return skade::InvalidArgument("the guest trapped in " + std::string(during) + ": " + message +
                                  note);
  }

  std::string path_;
  uint64_t fuel_;
  std::chrono::milliseconds time_;
  int64_t memory_;
  wasm_engine_t* engine_ = nullptr;
  wasmtime_module_t* module_ = nullptr;
};

}  // namespace

Result<std::unique_ptr<RowRunner>> MakeWasmRunner(const CustomStep& step) {
  StepSettings s(step);
  std::string module = s.String("module", "", true);
  auto fuel = static_cast<uint64_t>(s.Int("fuel", 10'000'000'000, 1, int64_t{1} << 62));
  auto time = std::chrono::milliseconds(s.Int("timeout_ms", 10000, 1, 3600000));
  int64_t memory_mb = s.Int("memory_mb", 256, 1, 4096);
  SKADE_RETURN_IF_ERROR(s.Check());
  auto runner = std::make_unique<WasmRunner>(module, fuel, time, memory_mb << 20);
  SKADE_RETURN_IF_ERROR(runner->Load());
  return runner;
}

}  // namespace bifrost
