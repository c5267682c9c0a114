// Archiving and restoring a report (/ai/reports/:id/archive, linked from the
// report's page): what archiving keeps (its runs) and stops (its schedule, its
// place in the list), and a button whose script archives or restores it
// (POST /api/ai/reports/:id/archive or /unarchive).
import { required, scriptJson, type ConsolePage } from '../../core/plugin-api.ts';
import { when } from './page-support.ts';

type Row = Record<string, any>;

export const reportArchivePage: ConsolePage = {
  view: new URL('./views/report-archive.hbs', import.meta.url),
  title: 'Archive or restore',
  async load(api, _query, params) {
    const id = encodeURIComponent(params.id);
    const report = required(await api.get<Row>(`/api/ai/reports/${id}`));
    const runs = required(await api.get<{ total: number }>(`/api/ai/report-runs?reportId=${id}&size=1`)).total;
    const archived = report.archived === true;
    return {
      name: report.name,
      reportUrl: `/ai/reports/${report.id}`,
      archived,
      since: archived && report.archivedAt ? api.text('archiveReport.since', { at: when(report.archivedAt) }) : null,
      runsText: api.text('archiveReport.runs', { runs }),
      json: scriptJson({ id: report.id, version: report.version, runs }),
      texts: scriptJson({
        archiving: api.text('deleteReport.archiving'),
        restoring: api.text('archiveReport.restoring'),
        notDeleted: api.text('deleteReport.notDeleted'),
        unreachable: api.text('common.unreachable'),
        serverAnswered: api.text('common.serverAnswered'),
      }),
    };
  },
};
