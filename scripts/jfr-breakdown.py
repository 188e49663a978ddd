#!/usr/bin/env python3
"""Where a JVM's sampled time went, from a Java Flight Recording (JDK 17's `jfr print --json`).

    DPDL4J_JAVA_OPTS="-Xmx4g -XX:StartFlightRecording=filename=/tmp/engine.jfr,settings=profile" \
        ./dpdl4j bench dpsgd --model standard-cnn --modes engine --steps 300
    scripts/jfr-breakdown.py /tmp/engine.jfr [--thread NAME] [--top 25]

Each execution or native-method sample of the chosen thread (default: the one with the most samples) is charged to the innermost dpdl4j frame on its stack
(the engine's kernel or step) and to the frame on top (the ND4J/oneDNN/JavaCPP call, or the Java method running).
A sample stands for its event's sampling period: JDK 17's `profile` settings sample a thread running Java every 10 ms
but one in a native method every 20 ms, so counting samples alone would weigh Java code twice (--java-period-ms,
--native-period-ms change the weights for other settings).
ND4J's OpenMP threads are not Java threads and are not sampled: while they work, the calling thread sits in the
native call that started them, so the shares are shares of the calling thread's wall time.
"""
import argparse
import collections
import json
import subprocess
import sys


def frame_name(frame):
    m = frame.get("method", {})
    t = m.get("type", {}).get("name", "?").replace("/", ".")
    return t + "." + m.get("name", "?")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("recording", help="the .jfr file")
    ap.add_argument("--thread", help="Java thread name to profile (default: the most sampled thread)")
    ap.add_argument("--top", type=int, default=25, help="rows of each table (default 25)")
    ap.add_argument("--java-period-ms", type=float, default=10, help="jdk.ExecutionSample's period (default 10, as in profile.jfc)")
    ap.add_argument("--native-period-ms", type=float, default=20,
                    help="jdk.NativeMethodSample's period (default 20, as in profile.jfc)")
    a = ap.parse_args()
    out = subprocess.run(["jfr", "print", "--json", "--stack-depth", "64", "--events",
                          "jdk.ExecutionSample,jdk.NativeMethodSample", a.recording],
                         check=True, capture_output=True, text=True).stdout
    events = json.loads(out)["recording"]["events"]
    threads = collections.Counter((e["values"].get("sampledThread") or {}).get("javaName") for e in events)
    if a.thread is None:
        a.thread = threads.most_common(1)[0][0]
        print("threads by samples: " + ", ".join("%s %d" % t for t in threads.most_common(6)))
    by_owner = collections.Counter()
    by_pair = collections.Counter()
    by_top = collections.Counter()
    total = 0
    samples = 0
    for e in events:
        v = e["values"]
        thread = (v.get("sampledThread") or {}).get("javaName")
        if thread != a.thread:
            continue
        frames = (v.get("stackTrace") or {}).get("frames") or []
        if not frames:
            continue
        top = frame_name(frames[0])
        owner = next((frame_name(f) for f in frames if frame_name(f).startswith("org.dpdl4j.")), "(outside dpdl4j)")
        weight = a.native_period_ms if e["type"] == "jdk.NativeMethodSample" else a.java_period_ms
        samples += 1
        total += weight
        by_owner[owner] += weight
        by_top[top] += weight
        by_pair[(owner, top)] += weight
    if total == 0:
        sys.exit("no samples of thread '%s' in %s" % (a.thread, a.recording))
    print("%d samples of thread %s, about %.1f s of its time; shares of that time:" % (samples, a.thread, total / 1000))
    for title, counter, fmt in (("innermost dpdl4j frame", by_owner, lambda k: k),
                                ("top frame", by_top, lambda k: k),
                                ("dpdl4j frame <- top frame", by_pair, lambda k: k[0] + "  <-  " + k[1])):
        print("\n%s:" % title)
        for k, n in counter.most_common(a.top):
            print("  %5.1f %%  %s" % (100.0 * n / total, fmt(k)))


if __name__ == "__main__":
    main()
