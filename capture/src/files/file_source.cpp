// Opening a capture file, telling pcap from pcapng by its first bytes, filling batches from the
// format's fast loop and slow step, and the public FileSource API. The formats themselves are in
// pcap_records.cpp and pcapng_blocks.cpp; file_source_impl.hpp describes the reader's shape.

#include "rocehil/capture/file_source.hpp"

#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <utility>

#include "files/byte_window.hpp"
#include "files/file_source_impl.hpp"
#include "rocehil/common/byte_order.hpp"
#include "rocehil/common/error.hpp"

namespace rocehil::capture {
using namespace file_detail;

const char* to_string(FileFormat format) {
  switch (format) {
    case FileFormat::pcap_us: return "pcap-us";
    case FileFormat::pcap_ns: return "pcap-ns";
    case FileFormat::pcapng: return "pcapng";
  }
  return "unknown";
}

std::unique_ptr<FileSource> FileSource::Impl::make(std::string name, ByteWindow window) {
  auto impl = std::make_unique<Impl>(std::move(name), std::move(window));
  impl->read_header();
  return std::unique_ptr<FileSource>(new FileSource(std::move(impl)));
}

void FileSource::Impl::stop(FileProblem::Kind kind, std::uint64_t at, std::string detail) {
  done = true;
  problems.push_back(FileProblem{kind, at, records + 1, std::move(detail)});
}

void FileSource::Impl::stop_short(std::uint64_t at, const std::string& where, const char* part,
                                  std::size_t got, std::size_t need) {
  std::string detail =
      win.error() != 0
          ? fmt::format("{}: reading the {} failed after {} of {} bytes: {}", where, part, got,
                        need, std::strerror(win.error()))
          : fmt::format("{}: the file ends inside the {} ({} of {} bytes)", where, part, got, need);
  stop(FileProblem::Kind::truncated, at, std::move(detail));
}

// ---- file header ----------------------------------------------------------------------------

void FileSource::Impl::read_header() {
  refill_at(0, pcap_file_header);
  const std::size_t have = avail();
  if (have == 0) {
    if (win.error() != 0) throw system_error(name + ": cannot read", win.error());
    throw input_error(name +
                      ": the file is empty; a capture holds at least a pcap or pcapng header "
                      "(was the capture stopped before it wrote anything?)");
  }
  if (have < 4) {
    throw input_error(fmt::format(
        "{}: the file is only {} bytes long; not a pcap or pcapng file (they start with a "
        "header of at least 24 bytes)",
        name, have));
  }
  const std::uint32_t le = load_le32(cur);
  const std::uint32_t be = load_be32(cur);
  if (le == pcap_magic_us || le == pcap_magic_ns || be == pcap_magic_us || be == pcap_magic_ns) {
    big = be == pcap_magic_us || be == pcap_magic_ns;
    read_pcap_header((big ? be : le) == pcap_magic_ns);
    return;
  }
  if (le == block_shb) {
    // The slow step reads the first section header like any later one (byte order, fast loop);
    // a problem in it leaves nothing to read, so opening fails with that problem's detail.
    format = FileFormat::pcapng;
    Frame unused;
    pcapng_step(unused, true);
    if (!problems.empty()) {
      const FileProblem& p = problems.front();
      if (p.kind == FileProblem::Kind::truncated && win.error() != 0) {
        throw system_error(name + ": cannot read", win.error());
      }
      throw input_error(fmt::format("{}: not a readable pcapng file: {}", name, p.detail));
    }
    return;
  }
  throw input_error(fmt::format(
      "{}: not a pcap or pcapng file (first 4 bytes 0x{:08x}); rocehil analyze reads pcap and "
      "pcapng captures",
      name, be));
}

// ---- batches --------------------------------------------------------------------------------

std::size_t FileSource::Impl::next_batch(std::span<Frame> out) {
  std::size_t n = 0;
  while (!done && n < out.size()) {
    if (pos() >= stop_at) {
      done = at_stop = true;
      break;
    }
    // The fast loop takes whole records only, so it sees the window end at stop_at; a record
    // that starts before it and ends beyond is the slow step's.
    const std::uint8_t* const window_end = end;
    if (stop_at - pos() < avail()) end = cur + (stop_at - pos());
    n += (this->*fast)(out.subspan(n));
    end = window_end;
    if (n == out.size()) break;
    if (pos() >= stop_at) continue;
    // Frames already in this batch point into the window, so the window moves only at the
    // start of a batch: a record that needs a refill ends the batch early instead.
    const Step s =
        format == FileFormat::pcapng ? pcapng_step(out[n], n == 0) : pcap_step(out[n], n == 0);
    if (s == Step::emitted) {
      ++n;
    } else if (s != Step::consumed) {
      break;
    }
  }
  return n;
}

std::unique_ptr<FileSource> open_file_source(const std::string& path,
                                             const WindowOptions& options) {
  std::string name = path == "-" ? std::string("<stdin>") : path;
  ByteWindow window = ByteWindow::open(path, name, options);
  return FileSource::Impl::make(std::move(name), std::move(window));
}

std::unique_ptr<FileSource> FileSource::open(const std::string& path) {
  return open_file_source(path, WindowOptions{});
}

std::unique_ptr<FileSource> FileSource::from_memory(std::span<const std::uint8_t> bytes,
                                                    const std::string& name) {
  return Impl::make(name, ByteWindow::memory(bytes));
}

FileSource::FileSource(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
FileSource::~FileSource() = default;

std::size_t FileSource::next_batch(std::span<Frame> out) {
  return impl_->next_batch(out);
}
FileFormat FileSource::format() const noexcept {
  return impl_->format;
}
const std::string& FileSource::name() const noexcept {
  return impl_->name;
}
std::uint64_t FileSource::records() const noexcept {
  return impl_->records;
}
const std::vector<FileProblem>& FileSource::problems() const noexcept {
  return impl_->problems;
}
const std::vector<FileInterface>& FileSource::interfaces() const noexcept {
  return impl_->described;
}
std::uint64_t FileSource::bytes_consumed() const noexcept {
  return impl_->pos();
}
std::uint64_t FileSource::size_hint() const noexcept {
  return impl_->win.input_size();
}

}  // namespace rocehil::capture
