import Foundation

public enum Memory {
    /// Anonymous resident memory (heap, stacks; not the file-backed LMDB map), in bytes, from
    /// /proc/self/status. Nil where there is no procfs.
    public static func residentAnonymous() -> Int? { status("RssAnon:") }

    /// Peak resident memory of the process (includes the file-backed map pages touched).
    public static func peakResident() -> Int? { status("VmHWM:") }

    private static func status(_ field: String) -> Int? {
        guard let text = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return nil }
        for line in text.split(separator: "\n") where line.hasPrefix(field) {
            let number = line.dropFirst(field.count).split(whereSeparator: { $0 == " " || $0 == "\t" }).first.flatMap { Int($0) }
            return number.map { $0 * 1024 }
        }
        return nil
    }

    /// Samples anonymous RSS every millisecond on a thread while `body` runs; returns the peak.
    public static func peakAnonymous<T>(during body: () async throws -> T) async rethrows -> (T, Int) {
        let peak = PeakBox()
        let thread = Thread {
            while !peak.stopped {
                peak.observe(residentAnonymous() ?? 0)
                usleep(1000)
            }
        }
        peak.observe(residentAnonymous() ?? 0)
        thread.start()
        let result = try await body()
        peak.observe(residentAnonymous() ?? 0)
        peak.stop()
        return (result, peak.value)
    }
}

private final class PeakBox: @unchecked Sendable {
    private let lock = NSLock()
    private var peak = 0
    private var done = false

    var stopped: Bool { lock.withLock { done } }
    var value: Int { lock.withLock { peak } }
    func stop() { lock.withLock { done = true } }
    func observe(_ value: Int) { lock.withLock { peak = max(peak, value) } }
}
