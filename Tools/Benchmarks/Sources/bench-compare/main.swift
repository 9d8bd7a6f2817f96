// The comparison: CacheLog beside the hand-written C path, a JSON file store and SQLite (GRDB),
// each measured in this one run on the same data, printed as one table of figures and ratios.
// CacheLog's logs run without automatic retention wherever a baseline keeps no policy (every
// measure but the year, which measures retention): a policy's passes are work the others skip,
// and they ran on in the background of the measures after them.
// Run it with `Tools/bench` from the repository root; `--help` lists the sizes.
import BenchSupport
import CacheLog
import FeedAPI
import FeedCache
import FeedCacheLog
import Foundation

let arguments = Array(CommandLine.arguments.dropFirst())

if arguments.first == "save-load-probe" {
    try await SaveLoadProbe.run(Array(arguments.dropFirst()))
    exit(0)
}

if arguments.first == "dump-feed" {
    FileHandle.standardOutput.write(Feeds.payload(Feeds.films(count: 100, seed: 1)))
    exit(0)
}

if arguments.first == "writer-probe" {
    try await WriterProbe.run(Array(arguments.dropFirst()))
    exit(0)
}

if arguments.first == "rebuild-probe" {
    try await RebuildProbe.run(path: arguments[1], reps: Int(arguments[2]) ?? 3)
    exit(0)
}

let configuration = try Configuration(arguments)
let comparison = Comparison(configuration)
try await comparison.run()
