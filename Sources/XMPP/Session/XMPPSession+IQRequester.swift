/// The session asks entities for the features built on its requests (``HTTPFileUpload``)
/// and edits the roster (``RosterRequester``).
extension XMPPSession: RosterRequester {}
