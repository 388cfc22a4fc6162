// The controller's end of the agents that dialed in: one epoll loop, a connection per host, a
// session per rank or capture over it.
#include "rocehil/remote/dialed_agents.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <deque>
#include <unordered_map>

#include "rocehil/channel/event_loop.hpp"
#include "rocehil/channel/tls_session.hpp"
#include "rocehil/common/error.hpp"

namespace rocehil::remote {

// Named, not anonymous: DialedAgents::Impl, declared in the header, holds these.
namespace dialed {

using Clock = DialedAgents::Clock;
using agent::SessionId;

// The session the controller greets each agent in; ranks and captures get 1, 2, ...
constexpr SessionId greeting_session = 0;

struct Connection {
  int fd = -1;
  std::unique_ptr<channel::TlsSession> tls;
  std::string peer;
  Clock::time_point hello_deadline;
  std::optional<agent::HelloReply> hello;  // set once it is identified
  std::string host;                        // the inventory's name, once identified
  std::string in;                          // bytes after the last whole line
  std::string out;                         // lines TLS has not taken yet
  bool waiting_to_write = false;           // the loop watches for EPOLLOUT
  bool lost = false;
  bool refusing = false;  // refused: the agent is being told why, then the connection closes
  std::string lost_why;
  SessionId next_session = greeting_session + 1;
  std::unordered_map<SessionId, std::deque<agent::Reply>> inboxes;  // the open sessions'
};

}  // namespace dialed

using agent::SessionId;
using dialed::Clock;
using dialed::Connection;
using dialed::greeting_session;

struct DialedAgents::Impl final : channel::GateEvents {
  Impl(const channel::RunSecret& secret, const std::string& run_id,
       std::vector<ExpectedHost> expected_hosts, const DialedAgentsOptions& opts,
       DialedAgentsEvents& sink)
      : events(sink),
        expected(std::move(expected_hosts)),
        options(opts),
        context(channel::Side::controller, secret, run_id),
        listen_fd(channel::listen_for_agents(opts.listen_address, opts.port, port)),
        gate(std::make_unique<channel::AgentGate>(loop, context, listen_fd, opts.limits, *this)) {}

  ~Impl() override {
    std::vector<std::shared_ptr<Connection>> all;
    for (auto& [fd, c] : connections) all.push_back(c);
    for (auto& c : all) close_connection(*c, "the controller ended the run");
    gate.reset();
    ::close(listen_fd);
  }

  // ---- the gate's reports ----

  void joined(channel::Joined j) override {
    auto c = std::make_shared<Connection>();
    c->fd = j.fd;
    c->tls = std::move(j.session);
    c->peer = std::move(j.peer);
    c->hello_deadline = Clock::now() + options.hello_deadline;
    connections.emplace(c->fd, c);
    const int fd = c->fd;
    loop.watch(fd, EPOLLIN, [this, fd](std::uint32_t ready) { on_ready(fd, ready); });
    write(*c, agent::Request{0, agent::HelloRequest{}, greeting_session});
  }

  void refused(const std::string& peer, const std::string& why) override {
    events.agent_refused(peer, why);
  }

  // ---- the loop ----

  void turn(std::chrono::milliseconds timeout) {
    loop.run_once(timeout);
    const auto now = Clock::now();
    gate->expire(now);
    std::vector<std::shared_ptr<Connection>> silent;
    for (auto& [fd, c] : connections)
      if (!c->hello && now >= c->hello_deadline) silent.push_back(c);
    for (auto& c : silent)
      refuse(*c, fmt::format("it proved the run's secret but answered no hello within {} ms",
                             options.hello_deadline.count()));
  }

  void on_ready(int fd, std::uint32_t ready) {
    const auto it = connections.find(fd);
    if (it == connections.end()) return;
    const std::shared_ptr<Connection> c = it->second;  // kept alive through a close below
    if ((ready & EPOLLOUT) != 0) flush(*c);
    if (!c->lost && (ready & (EPOLLIN | EPOLLHUP | EPOLLERR)) != 0) read_lines(*c);
  }

  void read_lines(Connection& c) {
    char chunk[65536];
    bool closed = false;
    std::string failure;
    while (true) {  // TLS may hold decrypted records beyond one read
      const channel::Transfer t = c.tls->read(chunk);
      c.in.append(chunk, t.bytes);
      if (t.closed) closed = true;
      if (t.step == channel::Step::failed) failure = c.tls->failure();
      if (closed || !failure.empty() || t.bytes == 0) break;
    }
    // Whole lines first: an agent's last results may come just before it closes.
    std::size_t start = 0;
    for (std::size_t nl; !c.lost && (nl = c.in.find('\n', start)) != std::string::npos;
         start = nl + 1)
      on_line(c, std::string_view(c.in).substr(start, nl - start));
    if (c.lost) return;
    c.in.erase(0, start);
    if (c.in.size() > agent::max_agent_line_bytes)
      return drop(c,
                  fmt::format("it sent a line longer than {} bytes", agent::max_agent_line_bytes));
    if (!failure.empty()) return drop(c, failure);
    if (closed) drop(c, "it closed the connection");
  }

  void on_line(Connection& c, std::string_view line) {
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.empty()) return;
    agent::ParsedReply parsed = agent::parse_reply(line);
    if (!parsed.reply)
      return drop(c, "it said something that is not the protocol: " + parsed.error);
    agent::Reply& reply = *parsed.reply;
    if (!c.hello) return identify(c, reply);
    const auto box = c.inboxes.find(reply.session);
    if (box != c.inboxes.end()) box->second.push_back(std::move(reply));
    // else: a session already ended (its "ended", a last stats line): nobody waits for it
  }

  void identify(Connection& c, agent::Reply& reply) {
    auto* hello = std::get_if<agent::HelloReply>(&reply.body);
    if (reply.session != greeting_session || hello == nullptr) {
      const auto* error = std::get_if<agent::ErrorReply>(&reply.body);
      return refuse(c, error != nullptr ? "it refused hello: " + error->message
                                        : std::string("it answered hello with another reply"));
    }
    if (hello->protocol != agent::agent_protocol_version)
      return refuse(c, fmt::format("it speaks protocol {} (rocehil {}), this controller {}: "
                                   "install the same rocehil on both",
                                   hello->protocol, hello->version, agent::agent_protocol_version));
    auto who = identify_agent(*hello, expected);
    if (const auto* refusal = std::get_if<AgentRefusal>(&who)) return refuse(c, refusal->why);
    const std::string& name = std::get<std::string>(who);
    if (const auto other = by_host.find(name); other != by_host.end())
      return refuse(c, fmt::format("host '{}' has joined already, from {}: a second agent for it "
                                   "is refused",
                                   name, other->second->peer));
    c.host = name;
    c.hello = std::move(*hello);
    by_host.emplace(name, connections.at(c.fd));
    write(c, agent::Request{std::nullopt, agent::AdmissionRequest{.admitted = true, .host = name},
                            greeting_session});
    events.agent_joined(name, c.peer);
  }

  // ---- writing ----

  void write(Connection& c, const agent::Request& request) {
    if (c.lost) return;
    c.out += agent::to_json_line(request);
    c.out += '\n';
    flush(c);
  }

  void flush(Connection& c) {
    while (!c.out.empty()) {
      const channel::Transfer t = c.tls->write(c.out);
      c.out.erase(0, t.bytes);
      if (t.closed) return drop(c, "it closed the connection");
      if (t.step == channel::Step::failed) return drop(c, c.tls->failure());
      if (t.bytes == 0) {
        if (t.step == channel::Step::want_write && !c.waiting_to_write) {
          loop.change(c.fd, EPOLLIN | EPOLLOUT);
          c.waiting_to_write = true;
        }
        return;  // want_read (a TLS key update): the next readable event flushes again
      }
    }
    if (c.waiting_to_write) {
      loop.change(c.fd, EPOLLIN);
      c.waiting_to_write = false;
    }
  }

  // ---- ending connections ----

  // The agent is told why before the connection closes: a detached agent exits 3 with it, so
  // its launcher (pdsh -S, a systemd unit) sees the failure where it started it.
  void refuse(Connection& c, const std::string& why) {
    if (c.lost || c.refusing) return;  // a failed write of the refusal lands here again
    c.refusing = true;
    events.agent_refused(c.peer, why);
    write(c, agent::Request{std::nullopt, agent::AdmissionRequest{.admitted = false, .why = why},
                            greeting_session});
    close_connection(c, why);
  }

  void drop(Connection& c, const std::string& why) {
    if (!c.hello) return refuse(c, why);
    events.agent_lost(c.host, why);
    close_connection(c, why);
  }

  void close_connection(Connection& c, const std::string& why) {
    if (c.lost) return;
    c.lost = true;
    c.lost_why = why;
    if (!c.host.empty()) {
      const auto it = by_host.find(c.host);
      if (it != by_host.end() && it->second.get() == &c) by_host.erase(it);
    }
    loop.forget(c.fd);
    ::close(c.fd);
    connections.erase(c.fd);  // may free `c` unless a link holds it: touch nothing after
  }

  DialedAgentsEvents& events;
  std::vector<ExpectedHost> expected;
  DialedAgentsOptions options;
  channel::EventLoop loop;
  channel::TlsContext context;
  std::uint16_t port = 0;
  int listen_fd = -1;
  std::unordered_map<int, std::shared_ptr<Connection>> connections;
  std::unordered_map<std::string, std::shared_ptr<Connection>> by_host;
  std::unique_ptr<channel::AgentGate> gate;
};

namespace {

// One session of a host's connection, as the AgentLink the run's code already talks to.
class SessionLink final : public AgentLink {
 public:
  SessionLink(DialedAgents::Impl& hub, std::shared_ptr<Connection> connection, SessionId session,
              std::string name)
      : hub_(hub), c_(std::move(connection)), session_(session), name_(std::move(name)) {
    c_->inboxes[session_];
  }
  ~SessionLink() override { close_input(); }

  const std::string& name() const override { return name_; }

  void send(const agent::Request& request) override {
    if (c_->lost || ended_) throw gone();
    agent::Request stamped = request;
    stamped.session = session_;
    hub_.write(*c_, stamped);
    if (c_->lost) throw gone();
  }

  std::optional<agent::Reply> receive(Clock::time_point deadline) override {
    while (true) {
      const auto box = c_->inboxes.find(session_);
      if (box != c_->inboxes.end() && !box->second.empty()) {
        agent::Reply reply = std::move(box->second.front());
        box->second.pop_front();
        return reply;
      }
      if (c_->lost || ended_) throw gone();
      const auto now = Clock::now();
      if (now >= deadline) return std::nullopt;
      hub_.turn(std::clamp(std::chrono::duration_cast<std::chrono::milliseconds>(deadline - now),
                           std::chrono::milliseconds(0), std::chrono::milliseconds(100)));
    }
  }

  // Ends the session in the agent: it stops what the session runs and releases what it holds
  // before it reads anything sent after this.
  void close_input() override {
    if (ended_) return;
    ended_ = true;
    c_->inboxes.erase(session_);
    // A lost connection may outlive the hub (the run ended first): then there is nobody to tell.
    if (!c_->lost) hub_.write(*c_, agent::Request{std::nullopt, agent::EndRequest{}, session_});
  }

 private:
  Error gone() const {
    return Error(ExitCode::infrastructure,
                 ended_
                     ? fmt::format("agent on {}: its session was ended", name_)
                     : fmt::format("agent on {}: its connection ended: {}", name_, c_->lost_why));
  }

  DialedAgents::Impl& hub_;
  std::shared_ptr<Connection> c_;
  SessionId session_;
  std::string name_;
  bool ended_ = false;
};

}  // namespace

DialedAgents::DialedAgents(const channel::RunSecret& secret, const std::string& run_id,
                           std::vector<ExpectedHost> expected, const DialedAgentsOptions& options,
                           DialedAgentsEvents& events)
    : impl_(std::make_unique<Impl>(secret, run_id, std::move(expected), options, events)) {}

DialedAgents::~DialedAgents() = default;

std::uint16_t DialedAgents::port() const {
  return impl_->port;
}

void DialedAgents::turn(std::chrono::milliseconds timeout) {
  impl_->turn(timeout);
}

std::vector<std::string> DialedAgents::await_all(Clock::time_point deadline,
                                                 const std::atomic<bool>* interrupt,
                                                 const std::function<void(std::size_t)>& progress) {
  const auto missing = [this] {
    std::vector<std::string> names;
    for (const ExpectedHost& h : impl_->expected)
      if (!impl_->by_host.contains(h.name)) names.push_back(h.name);
    return names;
  };
  std::size_t shown = static_cast<std::size_t>(-1);
  for (auto now = Clock::now(); now < deadline && (interrupt == nullptr || !*interrupt);
       now = Clock::now()) {
    if (progress && joined_count() != shown) progress(shown = joined_count());
    if (joined_count() == impl_->expected.size()) break;
    impl_->turn(std::min(std::chrono::duration_cast<std::chrono::milliseconds>(deadline - now),
                         std::chrono::milliseconds(50)));
  }
  return missing();
}

std::size_t DialedAgents::joined_count() const {
  return impl_->by_host.size();
}

const agent::HelloReply* DialedAgents::hello(const std::string& host) const {
  const auto it = impl_->by_host.find(host);
  return it == impl_->by_host.end() ? nullptr : &*it->second->hello;
}

std::unique_ptr<AgentLink> DialedAgents::open_session(const std::string& host, std::string name) {
  const auto it = impl_->by_host.find(host);
  if (it == impl_->by_host.end())
    throw Error(
        ExitCode::infrastructure,
        fmt::format("agent on {}: host '{}' has no agent dialed in to this run", name, host));
  Connection& c = *it->second;
  return std::make_unique<SessionLink>(*impl_, it->second, c.next_session++, std::move(name));
}

}  // namespace rocehil::remote
