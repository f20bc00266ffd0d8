//! Result store, statistical comparison, tables, charts and HTML reports
