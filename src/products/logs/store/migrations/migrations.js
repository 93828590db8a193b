import journal from './meta/_journal.json';
import m0000 from './0000_entries.sql';
import m0001 from './0001_search_index.sql';
import m0002 from './0002_legacy_ids.sql';
import m0003 from './0003_deferred_search_index.sql';
import m0004 from './0004_entry_counts.sql';

  export default {
    journal,
    migrations: {
      m0000,
m0001,
m0002,
m0003,
m0004
    }
  }
  