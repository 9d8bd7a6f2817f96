/// What a conditional load (``RemoteLoader/load(validators:)``) delivered.
public enum ConditionalLoad<Item: Sendable>: Sendable {
    /// The server sent the resource (HTTP 200): its items, and the validators to ask with next time.
    case modified(Item, HTTPValidators)
    /// The server said the resource did not change since the validators sent (HTTP 304), and gave
    /// these validators (those it left out are the ones sent).
    case notModified(HTTPValidators)
}
