#!/usr/bin/python3
"""The cli's rooms stay layered: no file of harness/cli/src/ROOM/ includes a file of a higher room.

Run:  /usr/bin/python3 harness/cli/tests/room_layers.py harness/cli/src ROOM... (lowest first)
The order is harness/cli/CMakeLists.txt's (cli_rooms), which passes it here as the unit test
cli_room_layers. Every source file must stand in one of the rooms; an include is found the way
the compiler finds it (beside the including file, then from src/), so "../runs/x.hpp" counts too.
Exits 1 naming each file, its line and the include that reaches up, or the file outside a room.
"""

import os
import re
import sys

INCLUDE = re.compile(r'^\s*#\s*include\s*["<]([^">]+)[">]')


def room_of(src, path):
    """The room a path under src/ stands in, or None when it is not under a room of src/."""
    rel = os.path.relpath(os.path.realpath(path), os.path.realpath(src))
    parts = rel.split(os.sep)
    return parts[0] if len(parts) > 1 and parts[0] != os.pardir else None


def main(argv):
    if len(argv) < 3:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    src, rooms = argv[1], argv[2:]
    level = {room: i for i, room in enumerate(rooms)}
    problems = []
    for entry in sorted(os.listdir(src)):
        path = os.path.join(src, entry)
        if os.path.isdir(path) and entry not in level:
            problems.append(f"{path}: a folder that is no room; add it to cli_rooms "
                            f"(harness/cli/CMakeLists.txt) at its level")
        elif os.path.isfile(path):
            problems.append(f"{path}: outside every room; move it into one")
    for room in rooms:
        folder = os.path.join(src, room)
        if not os.path.isdir(folder):
            problems.append(f"{folder}: room named in cli_rooms has no folder")
            continue
        for dirpath, _, names in os.walk(folder):
            for name in sorted(names):
                path = os.path.join(dirpath, name)
                with open(path, encoding="utf-8") as f:
                    lines = f.read().splitlines()
                for number, line in enumerate(lines, 1):
                    m = INCLUDE.match(line)
                    if not m:
                        continue
                    for base in (dirpath, src):
                        target = os.path.join(base, m.group(1))
                        if os.path.isfile(target):
                            break
                    else:
                        continue  # not the cli's: a library's or the system's
                    to = room_of(src, target)
                    if to is None or level.get(to, -1) > level[room]:
                        problems.append(f"{path}:{number}: #include \"{m.group(1)}\" reaches up "
                                        f"from room {room} into {to or 'no room'} (order, lowest "
                                        f"first: {' < '.join(rooms)})")
    for p in problems:
        print(p)
    if problems:
        print(f"{len(problems)} problem(s) with the cli's rooms")
        return 1
    print(f"cli rooms layered: {' < '.join(rooms)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
