/// What the state holds for one account when the bridge makes its transport: its resumable
/// stream session, its login state and its own archive cursor (``ResumePoint`` under the
/// account's name). Read by primary key, so that making 10,000 accounts reads 10,000 rows of
/// each table, not 10,000 times every row.
package struct StoredStartingPoint: Hashable, Sendable {
    package var session: StoredStreamSession?
    package var login: StoredLogin?
    package var resumePoint: String?

    package init(session: StoredStreamSession? = nil, login: StoredLogin? = nil, resumePoint: String? = nil) {
        self.session = session
        self.login = login
        self.resumePoint = resumePoint
    }
}
