import Foundation
import TestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Debian's `chromium`, headless, for the report's page: the DOM after its scripts ran, the
/// console messages it printed, and a screenshot. Each run is bounded twice: coreutils'
/// `timeout` ends chromium's whole process group (its renderer and zygote too) after
/// `Self.limit`, and the child's own wait gives up shortly after, so CI never hangs here.
struct HeadlessBrowser {
    static let limit = 40

    let chromium: String
    let timeout = "/usr/bin/timeout"

    /// A missing chromium is a failure, not a skip: `Tools/setup` installs it, as it does liblmdb.
    init() throws {
        let candidates = ["/usr/bin/chromium", "/usr/bin/chromium-browser"]
        chromium = try #require(candidates.first { FileManager.default.isExecutableFile(atPath: $0) },
                                "chromium is not installed: run Tools/setup (it installs Debian's chromium for the report's browser test)")
        try #require(FileManager.default.isExecutableFile(atPath: timeout), "coreutils' timeout is missing")
    }

    struct Page {
        var dom: String
        /// Lines chromium logged from the page's console (`console.log`, errors, uncaught exceptions).
        var console: [String]
        var seconds: Double
    }

    /// Opens `url` and returns the DOM once its scripts ran.
    func dumpDOM(_ url: URL) async throws -> Page {
        let (result, seconds) = try await run(["--dump-dom", url.absoluteString])
        try #require(result.status == 0, "chromium --dump-dom exited \(result.status)\n\(result.stderrText)")
        return Page(dom: result.stdoutText, console: Self.consoleLines(result.stderrText), seconds: seconds)
    }

    /// Opens `url` in a `width` × `height` window and writes a PNG of it to `file`.
    func screenshot(_ url: URL, to file: String, width: Int = 1280, height: Int = 900) async throws -> Page {
        let (result, seconds) = try await run(["--screenshot=\(file)", "--window-size=\(width),\(height)", "--hide-scrollbars", url.absoluteString])
        try #require(result.status == 0, "chromium --screenshot exited \(result.status)\n\(result.stderrText)")
        return Page(dom: "", console: Self.consoleLines(result.stderrText), seconds: seconds)
    }

    private func run(_ arguments: [String]) async throws -> (ChildProcess.Result, Double) {
        let profile = FileManager.default.temporaryDirectory.appendingPathComponent("chromium-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: profile, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: profile) }
        var flags = [
            "--headless", "--disable-gpu", "--no-first-run", "--no-default-browser-check", "--disable-extensions",
            "--disable-background-networking", "--disable-sync", "--disable-dev-shm-usage", "--mute-audio",
            "--user-data-dir=\(profile.path)", "--crash-dumps-dir=\(profile.path)",
            "--enable-logging=stderr", "--v=0",
        ]
        // Chromium refuses to start its sandbox as root (CI containers); elsewhere it keeps it.
        if getuid() == 0 { flags.append("--no-sandbox") }
        var environment = ProcessInfo.processInfo.environment
        Self.leaveTheClockReal(&environment)
        // Chromium writes its own files under HOME and XDG_CONFIG_HOME; keep them in the profile.
        environment["HOME"] = profile.path
        environment["XDG_CONFIG_HOME"] = profile.path
        environment["XDG_CACHE_HOME"] = profile.path
        let clock = ContinuousClock()
        let started = clock.now
        let result = try await ChildProcess.run(
            URL(fileURLWithPath: timeout), ["-k", "5", "\(Self.limit)", chromium] + flags + arguments,
            environment: environment, timeout: .seconds(Self.limit + 10))
        let elapsed = clock.now - started
        try #require(!result.timedOut && result.status != 124 && result.status != 137,
                     "chromium did not finish within \(Self.limit) s; killed\n\(result.stderrText)")
        return (result, Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18)
    }

    /// Chromium does not start under libfaketime (its zygote hangs, whatever the clock options):
    /// under the calendar stage of Tools/test (Tests/Calendar/later) it runs on the real clock,
    /// and says so. The page holds no clock of its own (the report's `--now` made it), so what
    /// is checked of it is the same.
    private static func leaveTheClockReal(_ environment: inout [String: String]) {
        guard let preload = environment["LD_PRELOAD"], preload.contains("faketime") else { return }
        print("\(Test.current?.name ?? "a test"): chromium runs on the real clock: it does not start under libfaketime")
        environment["LD_PRELOAD"] = preload.split(separator: ":").filter { !$0.contains("faketime") && !$0.contains("monotonic-timers") }
            .joined(separator: ":")
        for name in environment.keys where name.hasPrefix("FAKETIME") { environment[name] = nil }
    }

    /// Chromium logs what a page prints to its console as `…:CONSOLE(line)] "message", source: …`.
    static func consoleLines(_ stderr: String) -> [String] {
        stderr.split(separator: "\n").map(String.init).filter { $0.contains(":CONSOLE") }
    }
}
