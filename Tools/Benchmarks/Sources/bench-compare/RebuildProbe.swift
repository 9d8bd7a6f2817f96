import BenchSupport
import CacheLog
import Foundation

/// Runs in a fresh process (`bench-compare rebuild-probe PATH REPS`), so that its memory figures
/// are the rebuild's alone: rebuilds the state REPS times, sampling anonymous resident memory
/// (heap, not the file-backed LMDB map), then folds the same log with the C path. Prints one line:
/// `events bestSeconds peakAnonBytes baselineAnonBytes cEvents cBestSeconds cNoCRCBestSeconds`.
enum RebuildProbe {
    static func run(path: String, reps: Int) async throws {
        let baseline = Memory.residentAnonymous() ?? 0
        var best = Double.infinity
        var events = 0
        var peak = 0
        do {
            let log = try EventLog(path: path)
            for _ in 0..<reps {
                let t0 = now()
                let (report, high) = try await Memory.peakAnonymous { try await log.rebuildState() }
                best = min(best, now() - t0)
                events = report.eventsFolded
                peak = max(peak, high)
            }
        }
        // The CacheLog instance is gone (environment closed): the C path may open the same directory.
        var cBest = Double.infinity
        var cEvents = 0
        do {
            let store = try CPathStore(path: path, synced: true)
            for _ in 0..<reps {
                let t0 = now()
                cEvents = store.fold().events
                cBest = min(cBest, now() - t0)
            }
        }
        var cNoCRC = Double.infinity
        do {
            let store = try CPathStore(path: path, synced: true)
            for _ in 0..<reps {
                let t0 = now()
                _ = store.fold(verifyChecksums: false)
                cNoCRC = min(cNoCRC, now() - t0)
            }
        }
        print(events, best, peak, baseline, cEvents, cBest, cNoCRC)
    }
}
