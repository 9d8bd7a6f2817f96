import Foundation

/// Sizes of the run. Defaults finish in a few minutes on 2 cores.
struct Configuration {
    var items = 100
    var reps = 7
    var saves = 8
    var retrieves = 500
    var tasks = 64
    var bulk = 10_000
    var keys = 1000
    var big = 1_000_000
    var refreshes = 1000
    var asOfPoints = 40
    /// Simulated days of the year measure.
    var yearDays = 365
    /// Events in the scale log (0: no scale measures).
    var scale = 0
    var scaleKeys = 100_000
    var cli: String?
    var work: String?
    /// The measures to run (`--only`); nil: all of them.
    var only: Set<String>?

    /// The names `--only` takes, in the order the table shows them.
    static let measures = ["save", "writers", "bulk", "retrieve", "save-load", "warm", "observe", "size", "zlib", "refreshes", "large", "startup", "scale", "year"]

    static let help = """
        usage: bench-compare [options]
          --items N       items in the feed (default 100)
          --reps N        repetitions per measure; the table shows the median (default 7)
          --saves N       synced saves per repetition (default 8)
          --retrieves N   retrieves per repetition (default 500)
          --tasks N       the most concurrent saving tasks (default 64; 1 and 8 are measured too)
          --bulk N        events per bulk-append repetition (default 10000)
          --keys N        distinct keys in the large logs (default 1000)
          --big N         events in the largest log; logs of N/100 and N/10 are made too (default 1000000)
          --refreshes N   refreshes of an unchanged feed, and of one with 2 films changed (default 1000)
          --year-days N   simulated days of the year measure (default 365)
          --scale N       also measure history at scale on a log of N events (e.g. 10000000;
                          tens of minutes at that size), with --cli
          --scale-keys N  keys of the scale log (default 100000)
          --cli PATH      a release build of the cachelog CLI, for the replay and scale measures
          --work DIR      where the databases go (default: a new temporary directory, removed at the end)
          --only A,B      run only these measures: save, writers, bulk, retrieve, save-load, warm, observe, size,
                          zlib, refreshes, large, startup (with --cli), scale (with --scale), year
                          (a simulated year of the apps under retention: several minutes; not run
                          unless named)
        """

    init(_ arguments: [String]) throws {
        var index = 0
        func value() throws -> String {
            index += 1
            guard index < arguments.count else { throw ConfigurationError("\(arguments[index - 1]) needs a value") }
            return arguments[index]
        }
        func number() throws -> Int {
            let text = try value()
            guard let number = Int(text.replacingOccurrences(of: "_", with: "")), number > 0 else {
                throw ConfigurationError("\(arguments[index - 1]): '\(text)' is not a positive number")
            }
            return number
        }
        while index < arguments.count {
            switch arguments[index] {
            case "--items": items = try number()
            case "--reps": reps = try number()
            case "--saves": saves = try number()
            case "--retrieves": retrieves = try number()
            case "--tasks": tasks = try number()
            case "--bulk": bulk = try number()
            case "--keys": keys = try number()
            case "--big": big = try number()
            case "--refreshes": refreshes = try number()
            case "--as-of-points": asOfPoints = try number()
            case "--year-days": yearDays = try number()
            case "--scale": scale = try number()
            case "--scale-keys": scaleKeys = try number()
            case "--cli": cli = try value()
            case "--work": work = try value()
            case "--only":
                let names = try value().split(separator: ",").map(String.init)
                if let unknown = names.first(where: { !Self.measures.contains($0) }) {
                    throw ConfigurationError("--only: no measure '\(unknown)' (one of \(Self.measures.joined(separator: ", ")))")
                }
                only = Set(names)
            case "-h", "--help":
                print(Self.help)
                exit(0)
            default: throw ConfigurationError("unknown option \(arguments[index])\n\(Self.help)")
            }
            index += 1
        }
    }
}

struct ConfigurationError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
