// cachelog-reader: a reading process for the tests of a reader without the lock file.
//
//   cachelog-reader DB ROUNDS
//
// Says first whether it may write DB's lock.mdb ("with the lock file" or "without the lock
// file"). Then, ROUNDS times, verifies DB and replays it whole, printing one line a round: "ok
// SEQ" when verify found nothing wrong and the replay delivered every seq from 1 to the log's
// last, SEQ (a log no compaction has cut), or "busy" when the round threw
// CacheLogError.overlappedWrites. DB is opened read-only once, in the first round that is not
// busy; the later rounds read it again. Run by a user who may not write lock.mdb while another
// process writes, it reads as such a reader does: what the tests look at is that it answers,
// and that no signal ends it.
//
// Exit status: 0 when every round printed a line, 1 (with the reason on stderr) when one found
// something else, 64 on bad arguments.
import CacheLog
import Foundation

@main
struct CacheLogReader {
    static func main() {
        let arguments = Array(CommandLine.arguments.dropFirst())
        guard arguments.count == 2, let rounds = Int(arguments[1]), rounds >= 0 else {
            fail("usage: cachelog-reader DB ROUNDS", status: 64)
        }
        print(access(arguments[0] + "/lock.mdb", W_OK) == 0 ? "with the lock file" : "without the lock file")
        var log: EventLog?
        do {
            for _ in 0..<rounds {
                do {
                    let opened = try log ?? EventLog(path: arguments[0], options: .init(readOnly: true))
                    log = opened
                    print("ok \(try round(opened))")
                } catch CacheLogError.overlappedWrites {
                    print("busy")
                }
            }
        } catch {
            fail("\(error)", status: 1)
        }
    }

    /// One verify and one replay; the last seq the replay delivered.
    private static func round(_ log: EventLog) throws -> UInt64 {
        let report = try log.verify()
        guard report.isClean else { throw Unexpected(description: "verify found \(report.problems)") }
        var last: UInt64 = 0
        try log.forEachEvent(EventQuery(includePayload: true)) { item in
            guard case .event(let event) = item, event.seq == last + 1 else {
                throw Unexpected(description: "the replay delivered \(item) after seq \(last)")
            }
            last = event.seq
            return true
        }
        return last
    }

    private struct Unexpected: Error, CustomStringConvertible {
        let description: String
    }

    private static func fail(_ message: String, status: Int32) -> Never {
        FileHandle.standardError.write(Data("cachelog-reader: \(message)\n".utf8))
        exit(status)
    }
}
