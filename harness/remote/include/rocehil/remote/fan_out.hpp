#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <thread>
#include <vector>

namespace rocehil::remote {

// Calls work(i) for every i in [0, n) on at most `width` threads at once: bounded fan-out to
// many hosts, so a site of thousands does not open thousands of ssh connections together.
// `work` must not throw.
template <typename Work>
void fan_out(std::size_t n, std::size_t width, Work&& work) {
  width = std::clamp<std::size_t>(width, 1, std::max<std::size_t>(n, 1));
  std::atomic<std::size_t> next{0};
  std::vector<std::thread> threads;
  threads.reserve(width);
  for (std::size_t t = 0; t < width; ++t)
    threads.emplace_back([&] {
      for (std::size_t i = next++; i < n; i = next++) work(i);
    });
  for (auto& thread : threads) thread.join();
}

}  // namespace rocehil::remote
