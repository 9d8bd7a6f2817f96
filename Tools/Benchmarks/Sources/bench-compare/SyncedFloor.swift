import BenchSupport
import FeedAPI
import Foundation

/// What a synced save + load costs besides its time: the flushes the disk performs, counted by
/// the block device (`deviceFlushes(holding:)`), and the CPU time of the whole process (every
/// thread: the saving task, the writer's queue, GRDB's), store by store in turns. LMDB publishes
/// a commit with two ordered flushes (its data pages, then the meta page that points to them),
/// SQLite's WAL with one: the floor of the synced rows above.
extension Comparison {
    func syncedFloor(
        cacheLog: @escaping ([Film]) async throws -> Void, sqlite: @escaping ([Film]) async throws -> Void,
        json: @escaping ([Film]) async throws -> Void,
        feeds: [[Film]]
    ) async throws {
        progress("synced save + load: device flushes and CPU time")
        let perRound = 50
        let rounds = max(3, config.reps)
        let bodies = [cacheLog, sqlite, json]
        var flushes: [Int]? = [0, 0, 0]
        var cpu = [Samples](repeating: Samples(), count: bodies.count)
        var k = 0
        for _ in 0..<rounds {
            for (index, body) in bodies.enumerated() {
                let flushesBefore = deviceFlushes(holding: work)
                let cpuBefore = processCPUTime()
                for _ in 0..<perRound {
                    k += 1
                    try await body(feeds[k % feeds.count])
                }
                cpu[index].add(processCPUTime() - cpuBefore, ops: perRound)
                if let before = flushesBefore, let after = deviceFlushes(holding: work) {
                    flushes?[index] += after - before
                } else {
                    flushes = nil
                }
            }
        }
        let saves = Double(rounds * perRound)
        if let flushes {
            let per = flushes.map { Double($0) / saves }
            rows.append(Row(measure: "synced save + load: the disk's flushes per save (its device's counter)", cacheLog: String(format: "%.2f", per[0]),
                            baseline: String(format: "SQLite FULL: %.2f; JSON + fsync: %.2f", per[1], per[2]),
                            ratio: x(per[0] / per[1]) + " SQLite's", target: "(floor: 2 to 1)", met: nil))
        } else {
            notes.append("flushes per save: not counted (the kernel gives no flush counter for the device holding \(work))")
        }
        let (ours, theirs, files) = (cpu[0].median, cpu[1].median, cpu[2].median)
        rows.append(Row(measure: "synced save + load: the process's CPU time per save + load (all threads)", cacheLog: ms(ours),
                        baseline: "SQLite FULL: \(ms(theirs)); JSON + fsync: \(ms(files))", ratio: x(ours / theirs) + " SQLite's",
                        target: "≤ 1.20×", met: ours / theirs <= 1.2))
    }
}
