import { runAdminAuditConformance } from '../conformance/admin-audit-suite.js';
import { runAdminStoreConformance } from '../conformance/admin-store-suite.js';
import { makeMysqlFixture } from './mysql-fixture.js';

runAdminStoreConformance('mysql', () => makeMysqlFixture('mysql_admin'));
runAdminAuditConformance('mysql', () => makeMysqlFixture('mysql_audit'));
