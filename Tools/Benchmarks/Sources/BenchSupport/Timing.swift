import Foundation

/// Monotonic time in seconds (CLOCK_MONOTONIC via ContinuousClock).
public func now() -> Double {
    let elapsed = ContinuousClock.now - start
    let (seconds, attoseconds) = elapsed.components
    return Double(seconds) + Double(attoseconds) / 1e18
}

private let start = ContinuousClock.now

/// Per-operation times of repeated samples: each sample runs the body once and divides by `ops`.
public struct Samples: Sendable {
    public var values: [Double] = []

    public init() {}

    public mutating func add(_ seconds: Double, ops: Int = 1) { values.append(seconds / Double(ops)) }
    public var best: Double { values.min() ?? .nan }
    public var median: Double {
        let sorted = values.sorted()
        guard !sorted.isEmpty else { return .nan }
        return sorted.count % 2 == 1 ? sorted[sorted.count / 2] : (sorted[sorted.count / 2 - 1] + sorted[sorted.count / 2]) / 2
    }
}

/// Times `body`, which performs `ops` operations, `reps` times.
public func measure(reps: Int, ops: Int = 1, _ body: () async throws -> Void) async rethrows -> Samples {
    var samples = Samples()
    for _ in 0..<reps {
        let t0 = now()
        try await body()
        samples.add(now() - t0, ops: ops)
    }
    return samples
}

/// Times two competitors alternately (A, B, A, B, …) so that noise from other processes on the
/// machine falls on both alike.
public func measurePair(reps: Int, ops: Int = 1, _ a: () async throws -> Void, _ b: () async throws -> Void) async rethrows -> (Samples, Samples) {
    var sa = Samples(), sb = Samples()
    for _ in 0..<reps {
        var t0 = now()
        try await a()
        sa.add(now() - t0, ops: ops)
        t0 = now()
        try await b()
        sb.add(now() - t0, ops: ops)
    }
    return (sa, sb)
}

/// Three competitors, alternately.
public func measureAll(reps: Int, ops: Int = 1, _ bodies: [() async throws -> Void]) async throws -> [Samples] {
    var samples = Array(repeating: Samples(), count: bodies.count)
    for _ in 0..<reps {
        for (index, body) in bodies.enumerated() {
            let t0 = now()
            try await body()
            samples[index].add(now() - t0, ops: ops)
        }
    }
    return samples
}

/// CPU time the whole process has used, in seconds (every thread: the caller's task, the
/// writer's queue and whatever it runs in the background).
public func processCPUTime() -> Double {
    var time = timespec()
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &time)
    return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
}

/// The load average over the last minute (`/proc/loadavg`), nil where there is none.
public func loadAverage() -> Double? {
    guard let text = try? String(contentsOfFile: "/proc/loadavg", encoding: .utf8) else { return nil }
    return text.split(separator: " ").first.flatMap { Double($0) }
}

/// Flush requests the block device holding `path` has completed (field 16 of its
/// `/sys/dev/block/MAJOR:MINOR/stat`: what reached the disk's cache-flush command, counting the
/// `O_DSYNC` writes an `strace` of `fdatasync` calls misses). Nil where the kernel does not say.
/// The count is the device's: whatever else flushes it meanwhile is counted too.
public func deviceFlushes(holding path: String) -> Int? {
    var info = stat()
    guard stat(path, &info) == 0 else { return nil }
    let device = UInt64(info.st_dev)
    // glibc's gnu_dev_major / gnu_dev_minor, written out: Swift does not import the macros.
    let major = ((device >> 8) & 0xfff) | ((device >> 32) & ~UInt64(0xfff))
    let minor = (device & 0xff) | ((device >> 12) & ~UInt64(0xff))
    guard let text = try? String(contentsOfFile: "/sys/dev/block/\(major):\(minor)/stat", encoding: .utf8) else { return nil }
    let fields = text.split(separator: " ", omittingEmptySubsequences: true)
    guard fields.count >= 16 else { return nil }
    return Int(fields[15])
}
