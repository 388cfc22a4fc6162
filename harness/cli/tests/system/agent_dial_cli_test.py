"""System tests of `rocehil agent --connect`: the real binary dialing a controller played by
OpenSSL's own `openssl s_server` (TLS 1.3, an external PSK, no certificate), an implementation
independent of rocehil's, over TCP on loopback.

Usage: python3 agent_dial_cli_test.py PATH/TO/rocehil
"""
import json
import os
import secrets
import shutil
import socket
import subprocess
import sys
import time
import unittest

ROCEHIL = None


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Controller:
    """openssl s_server holding `key` for run `run_id`: what it reads from the agent lands in
    its stdout, what the test writes to its stdin goes to the agent."""

    def __init__(self, key, run_id):
        self.port = free_port()
        self.proc = subprocess.Popen(
            ["openssl", "s_server", "-accept", f"127.0.0.1:{self.port}", "-nocert", "-tls1_3",
             "-ciphersuites", "TLS_AES_128_GCM_SHA256", "-psk", key, "-psk_identity",
             f"rocehil-run:{run_id}", "-quiet", "-naccept", "1"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        # Listening once the port can no longer be bound (a probe connection would be the one
        # connection -naccept allows).
        for _ in range(500):
            with socket.socket() as s:
                try:
                    s.bind(("127.0.0.1", self.port))
                except OSError:
                    return
            time.sleep(0.01)
        raise AssertionError(f"openssl s_server did not listen: {self.proc.stderr.read()}")

    def hello(self, request_id):
        """Sends the agent a hello and returns its reply, parsed."""
        self.proc.stdin.write(b'{"v":1,"op":"hello","id":%d}\n' % request_id)
        self.proc.stdin.flush()
        return json.loads(self.proc.stdout.readline())

    def admission(self, admitted, host="", why=""):
        """What rocehil's controller says once it has matched the agent's hello: admitted as
        `host`, or refused and why."""
        line = {"v": 1, "op": "admission", "admitted": admitted}
        if host:
            line["host"] = host
        if why:
            line["why"] = why
        self.proc.stdin.write((json.dumps(line) + "\n").encode())
        self.proc.stdin.flush()

    def close(self):
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()
        close_pipes(self.proc)


def close_pipes(p):
    for pipe in (p.stdin, p.stdout, p.stderr):
        if pipe:
            pipe.close()


STARTED = []  # every agent process a test started, ended and closed in tearDown


def agent(port, run_id, key=None, stdin_key=None, extra=()):
    env = dict(os.environ)
    env.pop("ROCEHIL_RUN_SECRET", None)
    if key is not None:
        env["ROCEHIL_RUN_SECRET"] = key
    p = subprocess.Popen([ROCEHIL, "agent", "--connect", f"127.0.0.1:{port}", "--run-id", run_id,
                          *extra],
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         env=env)
    STARTED.append(p)
    if stdin_key is not None:
        p.stdin.write((stdin_key + "\n").encode())
        p.stdin.flush()
    return p


class AgentDialTest(unittest.TestCase):
    def setUp(self):
        if shutil.which("openssl") is None:
            self.skipTest("openssl (the independent TLS server) is not installed")

    def tearDown(self):
        while STARTED:
            p = STARTED.pop()
            if p.poll() is None:
                p.kill()
            p.wait()
            close_pipes(p)

    def test_an_agent_serves_openssls_server_over_the_runs_key_and_hides_the_key(self):
        key = secrets.token_hex(32)
        controller = Controller(key, "r1")
        try:
            a = agent(controller.port, "r1", key=key)
            hello = controller.hello(1)
            self.assertEqual(hello["op"], "hello")
            self.assertEqual(hello["id"], 1)
            self.assertIn("soft", hello["providers"])
            # The key reached the agent through its environment, which no longer shows it, and
            # never through its command line.
            for shown in ("cmdline", "environ"):
                with open(f"/proc/{a.pid}/{shown}", "rb") as f:
                    self.assertFalse(key.encode() in f.read(), f"the key is in /proc/PID/{shown}")
            # Admitted (the next reply shows the agent read it), then the controller goes: the
            # agent stops and exits 0.
            controller.admission(True, host="h1")
            self.assertEqual(controller.hello(2)["id"], 2)
            controller.close()
            self.assertEqual(a.wait(timeout=30), 0, a.stderr.read().decode())
        finally:
            controller.close()

    def test_the_key_may_come_as_stdins_first_line(self):
        key = secrets.token_hex(32)
        controller = Controller(key, "r2")
        try:
            a = agent(controller.port, "r2", stdin_key=key)
            self.assertEqual(controller.hello(7)["id"], 7)
            controller.admission(True, host="h2")
            self.assertEqual(controller.hello(8)["id"], 8)
            controller.close()
            self.assertEqual(a.wait(timeout=30), 0)
        finally:
            controller.close()

    def test_another_key_is_refused_and_the_agent_exits_3_naming_the_controller(self):
        controller = Controller(secrets.token_hex(32), "r3")
        try:
            a = agent(controller.port, "r3", key=secrets.token_hex(32))
            self.assertEqual(a.wait(timeout=30), 3)
            err = a.stderr.read().decode()
            self.assertIn(f"the controller at 127.0.0.1:{controller.port} refused it", err)
            self.assertEqual(len(err.strip().splitlines()), 1, err)
        finally:
            controller.close()

    def test_nobody_listening_exits_3_naming_the_address(self):
        port = free_port()
        a = agent(port, "r4", key=secrets.token_hex(32))
        self.assertEqual(a.wait(timeout=30), 3)
        self.assertIn(f"cannot reach the controller at 127.0.0.1:{port}", a.stderr.read().decode())

    def test_detached_it_returns_once_joined_and_ends_with_its_controller(self):
        key = secrets.token_hex(32)
        controller = Controller(key, "r5")
        try:
            launcher = agent(controller.port, "r5", stdin_key=key, extra=("--detach", "--as", "h7"))
            # Connected and answering, but not admitted yet: the launcher waits.
            hello = controller.hello(3)
            self.assertEqual(hello["host"], "h7")
            time.sleep(0.3)
            self.assertIsNone(launcher.poll(), "the launcher returned before the agent was admitted")
            controller.admission(True, host="h7")
            # What ssh or pdsh waits for: the launcher exits 0 once the agent has joined, and
            # holds none of the launcher's pipes (communicate() returns: they are closed).
            out, err = launcher.communicate(timeout=30)
            self.assertEqual(launcher.returncode, 0, err.decode())
            self.assertEqual(out, b"")
            pids = agents_of_run("r5")
            self.assertEqual(len(pids), 1, pids)
            with open(f"/proc/{pids[0]}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            self.assertEqual(int(fields[3]), pids[0], "the agent leads its own session")  # sid
            # The controller goes: the agent in the background ends too.
            controller.close()
            deadline = time.monotonic() + 30
            while agents_of_run("r5") and time.monotonic() < deadline:
                time.sleep(0.05)
            self.assertEqual(agents_of_run("r5"), [])
        finally:
            controller.close()

    def test_detached_it_keeps_no_descriptor_its_launcher_handed_down(self):
        # A launcher starting several agents at once from threads hands each the others' pipes
        # (rocehil run's local launcher did, and waited for them to close until its timeout).
        # Here: a pipe left open across exec; once the launcher exits and the test closes its
        # own write end, the read end must see end of file, as nobody else holds it.
        key = secrets.token_hex(32)
        controller = Controller(key, "r7")
        read_end, write_end = os.pipe()
        try:
            env = dict(os.environ)
            env.pop("ROCEHIL_RUN_SECRET", None)
            launcher = subprocess.Popen(
                [ROCEHIL, "agent", "--connect", f"127.0.0.1:{controller.port}", "--run-id", "r7",
                 "--detach"],
                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
                pass_fds=(write_end,))
            STARTED.append(launcher)
            launcher.stdin.write((key + "\n").encode())
            launcher.stdin.flush()
            controller.admission(True, host="h1")
            out, err = launcher.communicate(timeout=30)
            self.assertEqual(launcher.returncode, 0, err.decode())
            self.assertEqual(len(agents_of_run("r7")), 1)  # the agent runs on
            os.close(write_end)
            write_end = -1
            os.set_blocking(read_end, False)
            try:
                self.assertEqual(os.read(read_end, 1), b"")  # end of file: nobody holds it
            except BlockingIOError:
                self.fail("the detached agent still holds the launcher's pipe")
        finally:
            if write_end >= 0:
                os.close(write_end)
            os.close(read_end)
            controller.close()

    def test_detached_and_refused_by_the_controller_it_exits_3_with_the_reason(self):
        # The controller's refusal comes after the handshake (the key was right): pdsh -S must
        # still see the failure, with the reason the controller gave.
        key = secrets.token_hex(32)
        controller = Controller(key, "r8")
        try:
            launcher = agent(controller.port, "r8", stdin_key=key, extra=("--detach", "--as", "vm"))
            controller.hello(1)
            controller.admission(False, why="an agent on host 'vm' is not in the inventory")
            _, err = launcher.communicate(timeout=30)
            self.assertEqual(launcher.returncode, 3, err.decode())
            self.assertIn(f"the controller at 127.0.0.1:{controller.port} refused it: an agent on "
                          "host 'vm' is not in the inventory", err.decode())
            deadline = time.monotonic() + 30
            while agents_of_run("r8") and time.monotonic() < deadline:
                time.sleep(0.05)
            self.assertEqual(agents_of_run("r8"), [])
        finally:
            controller.close()

    def test_detached_and_dropped_before_admission_it_exits_3(self):
        key = secrets.token_hex(32)
        controller = Controller(key, "r9")
        try:
            launcher = agent(controller.port, "r9", stdin_key=key, extra=("--detach",))
            controller.hello(1)
            controller.close()
            _, err = launcher.communicate(timeout=30)
            self.assertEqual(launcher.returncode, 3, err.decode())
            self.assertIn("closed the connection before admitting it", err.decode())
        finally:
            controller.close()

    def test_detached_with_another_key_exits_3_and_leaves_nothing(self):
        controller = Controller(secrets.token_hex(32), "r6")
        try:
            launcher = agent(controller.port, "r6", stdin_key=secrets.token_hex(32),
                             extra=("--detach",))
            _, err = launcher.communicate(timeout=30)
            self.assertEqual(launcher.returncode, 3)
            self.assertIn(f"the controller at 127.0.0.1:{controller.port} refused it", err.decode())
            self.assertEqual(agents_of_run("r6"), [])
        finally:
            controller.close()


def agents_of_run(run_id):
    """The PIDs of agents of `run_id` running on this machine (from /proc)."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                argv = f.read().split(b"\0")
        except OSError:
            continue
        if b"--connect" in argv and run_id.encode() in argv:
            with open(f"/proc/{entry}/stat") as f:
                if f.read().rsplit(")", 1)[1].split()[0] == "Z":
                    continue
            found.append(int(entry))
    return found


if __name__ == "__main__":
    ROCEHIL = os.path.abspath(sys.argv.pop(1))
    unittest.main(verbosity=2)
