// cachelog-writer: a second process for the engine's multi-process, crash and full-disk tests.
//
//   cachelog-writer DB COUNT [--batch | --mixed] [--seed N] [--map-size BYTES] [--payload-bytes N]
//                   [--delay-ms N] [--file-size-limit BYTES] [--checkpoint-interval N]
//
// Appends COUNT saves to key "k<i % 7>", printing the seq range of each append on stdout as it
// commits, so a parent can tell exactly which appends were acknowledged before it killed this
// process.
//
//   --batch            each save is delete + put in one append, as a feed save is
//   --mixed            save i is a delete + put batch when i is odd, a single put when i is even
//   --seed N           payload i is `payload(seed: N, index: i)` below (SplitMix64 bytes), so a
//                      parent can tell what was sent; without it payloads are random
//   --file-size-limit  sets RLIMIT_FSIZE and ignores SIGXFSZ, so that a write past BYTES fails
//                      with EFBIG the way a full disk fails a write (the full-disk test)
//   --checkpoint-interval  events between checkpoints, so a test gets checkpoints from few events
//
// Exit status: 0 when every append committed, 1 (with the error on stderr) when one failed.
import CacheLog
import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

struct Arguments {
    var path = ""
    var count = 0
    var batch = false
    var mixed = false
    var seed: UInt64?
    var mapSize = 64 << 20
    var payloadBytes = 64
    var delayMilliseconds = 0
    var fileSizeLimit: UInt64?
    var checkpointInterval = 4096

    init?(_ args: [String]) {
        var rest = args.makeIterator()
        var positional: [String] = []
        while let arg = rest.next() {
            switch arg {
            case "--batch": batch = true
            case "--mixed": mixed = true
            case "--seed": guard let v = rest.next().flatMap(UInt64.init) else { return nil }; seed = v
            case "--map-size": guard let v = rest.next().flatMap(Int.init) else { return nil }; mapSize = v
            case "--payload-bytes": guard let v = rest.next().flatMap(Int.init) else { return nil }; payloadBytes = v
            case "--delay-ms": guard let v = rest.next().flatMap(Int.init) else { return nil }; delayMilliseconds = v
            case "--file-size-limit": guard let v = rest.next().flatMap(UInt64.init) else { return nil }; fileSizeLimit = v
            case "--checkpoint-interval": guard let v = rest.next().flatMap(Int.init) else { return nil }; checkpointInterval = v
            default: positional.append(arg)
            }
        }
        guard positional.count == 2, let count = Int(positional[1]) else { return nil }
        path = positional[0]
        self.count = count
    }
}

/// The payload of save `index` under `--seed`: `count` bytes of SplitMix64 output (incompressible).
func payload(seed: UInt64, index: Int, count: Int) -> Data {
    var state = seed &* 0x9E37_79B9_7F4A_7C15 &+ UInt64(index)
    var bytes: [UInt8] = []
    bytes.reserveCapacity(count)
    while bytes.count < count {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        z ^= z >> 31
        withUnsafeBytes(of: z.littleEndian) { bytes.append(contentsOf: $0.prefix(count - bytes.count)) }
    }
    return Data(bytes)
}

guard let arguments = Arguments(Array(CommandLine.arguments.dropFirst())) else {
    FileHandle.standardError.write(Data("usage: cachelog-writer DB COUNT [--batch | --mixed] [--seed N] [--map-size BYTES] [--payload-bytes N] [--delay-ms N] [--file-size-limit BYTES] [--checkpoint-interval N]\n".utf8))
    exit(64)
}

#if canImport(Glibc)
let fileSizeResource = __rlimit_resource_t(RLIMIT_FSIZE.rawValue)
#else
let fileSizeResource = RLIMIT_FSIZE
#endif

if let limit = arguments.fileSizeLimit {
    // Past the limit a write fails with EFBIG instead of the process dying of SIGXFSZ.
    signal(SIGXFSZ, SIG_IGN)
    var rlim = rlimit()
    getrlimit(fileSizeResource, &rlim)
    rlim.rlim_cur = rlim_t(limit)
    guard setrlimit(fileSizeResource, &rlim) == 0 else {
        FileHandle.standardError.write(Data("cachelog-writer: setrlimit(RLIMIT_FSIZE) failed: errno \(errno)\n".utf8))
        exit(1)
    }
}


do {
    let log = try CacheLog(path: arguments.path, options: .init(initialMapSize: arguments.mapSize, checkpointInterval: arguments.checkpointInterval))
    var generator = SystemRandomNumberGenerator()
    for i in 0..<arguments.count {
        let key = "k\(i % 7)"
        // Varied bytes, so that compression cannot shrink the payload to nothing.
        let bytes = arguments.seed.map { payload(seed: $0, index: i, count: arguments.payloadBytes) }
            ?? Data((0..<arguments.payloadBytes).map { _ in UInt8.random(in: 0...255, using: &generator) })
        let put = Event.put(key: key, payload: bytes, timestamp: Date())
        let isBatch = arguments.batch || (arguments.mixed && i % 2 == 1)
        let events = isBatch ? [.delete(key: key, reason: .replaced), put] : [put]
        let range = try await log.append(events)
        // Unbuffered, so every acknowledged append reaches the parent before a kill can lose it.
        FileHandle.standardOutput.write(Data("\(range.lowerBound) \(range.upperBound)\n".utf8))
        if arguments.delayMilliseconds > 0 { try await Task.sleep(for: .milliseconds(arguments.delayMilliseconds)) }
    }
} catch {
    FileHandle.standardError.write(Data("cachelog-writer: \(error)\n".utf8))
    exit(1)
}
