// The staged copier's slots pinned ahead (staged_upload.cuh: upload_ahead_start, PARVIS_UPLOAD_AHEAD,
// issue 14): a thread that creates the CUDA context and pins one block while a single call
// decodes its images; the copier's ensure_slots takes the block (upload_ahead_take).
#include <cuda_runtime.h>

#include <cstdint>
#include <mutex>
#include <thread>

#include "staged_upload.cuh"

namespace parvis::cuda {

namespace {

struct Ahead {
  std::mutex mu;
  std::thread thread;
  uint8_t* block = nullptr;  // written by the thread, read after it is joined
  size_t bytes = 0;
  ~Ahead() {  // a safety net: upload_ahead_finish has joined it before main returned
    if (thread.joinable()) thread.join();
  }
};
Ahead& ahead_state() {
  static Ahead a;
  return a;
}

}  // namespace

uint8_t* upload_ahead_take(size_t bytes, size_t* size) {
  Ahead& a = ahead_state();
  std::lock_guard<std::mutex> lk(a.mu);
  if (a.thread.joinable()) a.thread.join();
  if (!a.block || a.bytes < bytes) return nullptr;
  uint8_t* p = a.block;
  *size = a.bytes;
  a.block = nullptr;
  a.bytes = 0;
  return p;
}

void upload_ahead_start() {
  TransferConfig c;
  if (!transfer_config_from_env(&c).ok() || !c.ahead) return;  // malformed: the copier says so
  if (c.mode != Transfer::Auto && c.mode != Transfer::Staged) return;  // no slots to pin
  Ahead& a = ahead_state();
  std::lock_guard<std::mutex> lk(a.mu);
  if (a.thread.joinable() || a.block) return;
  const size_t bytes = c.pinned ? c.pinned : size_t(c.threads) * size_t(c.slots) * c.chunk;
  a.thread = std::thread([&a, bytes] {
    void* p = nullptr;
    // The context (cudaFree(nullptr) creates it), then the slots; a failure: no block.
    if (cudaFree(nullptr) == cudaSuccess && cudaMallocHost(&p, bytes) == cudaSuccess) {
      a.block = static_cast<uint8_t*>(p);
      a.bytes = bytes;
    } else {
      (void)cudaGetLastError();
    }
  });
}

void upload_ahead_finish() {
  Ahead& a = ahead_state();
  std::lock_guard<std::mutex> lk(a.mu);
  if (a.thread.joinable()) a.thread.join();
  if (a.block) cudaFreeHost(a.block);
  a.block = nullptr;
  a.bytes = 0;
}

}  // namespace parvis::cuda
