// cachelog-writer: a second process for the engine's multi-process and crash tests.
//
//   cachelog-writer DB COUNT [--batch] [--map-size BYTES] [--payload-bytes N] [--delay-ms N]
//
// Appends COUNT saves to key "k<i % 7>" (with --batch each save is delete + put in one append,
// as a feed save is), printing the seq range of each append on stdout as it commits, so a
// parent can tell exactly which appends were acknowledged before it killed this process.
import CacheLog
import Foundation

struct Arguments {
    var path = ""
    var count = 0
    var batch = false
    var mapSize = 64 << 20
    var payloadBytes = 64
    var delayMilliseconds = 0

    init?(_ args: [String]) {
        var rest = args.makeIterator()
        var positional: [String] = []
        while let arg = rest.next() {
            switch arg {
            case "--batch": batch = true
            case "--map-size": guard let v = rest.next().flatMap(Int.init) else { return nil }; mapSize = v
            case "--payload-bytes": guard let v = rest.next().flatMap(Int.init) else { return nil }; payloadBytes = v
            case "--delay-ms": guard let v = rest.next().flatMap(Int.init) else { return nil }; delayMilliseconds = v
            default: positional.append(arg)
            }
        }
        guard positional.count == 2, let count = Int(positional[1]) else { return nil }
        path = positional[0]
        self.count = count
    }
}

guard let arguments = Arguments(Array(CommandLine.arguments.dropFirst())) else {
    FileHandle.standardError.write(Data("usage: cachelog-writer DB COUNT [--batch] [--map-size BYTES] [--payload-bytes N] [--delay-ms N]\n".utf8))
    exit(64)
}

do {
    let log = try CacheLog(path: arguments.path, options: .init(initialMapSize: arguments.mapSize))
    for i in 0..<arguments.count {
        let key = "k\(i % 7)"
        // Varied bytes, so that compression cannot shrink the payload to nothing.
        var generator = SystemRandomNumberGenerator()
        let payload = Data((0..<arguments.payloadBytes).map { _ in UInt8.random(in: 0...255, using: &generator) })
        let put = Event.put(key: key, payload: payload, timestamp: Date())
        let events = arguments.batch ? [.delete(key: key, reason: .replaced), put] : [put]
        let range = try await log.append(events)
        // Unbuffered, so every acknowledged append reaches the parent before a kill can lose it.
        FileHandle.standardOutput.write(Data("\(range.lowerBound) \(range.upperBound)\n".utf8))
        if arguments.delayMilliseconds > 0 { try await Task.sleep(for: .milliseconds(arguments.delayMilliseconds)) }
    }
} catch {
    FileHandle.standardError.write(Data("cachelog-writer: \(error)\n".utf8))
    exit(1)
}
