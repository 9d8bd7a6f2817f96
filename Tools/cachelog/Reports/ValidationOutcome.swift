/// What validation did (or, in a dry run, would do) to one key; `validate --format json` prints
/// an array of them.
struct ValidationOutcome: Encodable {
    enum Kind: String, Encodable { case expired, deleted, fresh, empty, failed }

    let key: String
    let outcome: Kind
    let detail: String
    /// `true` in a dry run; left out otherwise.
    var dryRun: Bool?
}
