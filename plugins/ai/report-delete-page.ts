// Deleting a report (/ai/reports/:id/delete, the report page's "Delete"): the
// console's confirmation says what goes with it, the number of its runs (its
// history), and offers to archive it instead; its script deletes it with
// ?force=true only when the page named runs (DELETE /api/ai/reports/:id), so
// a run recorded since is not lost unseen (409, shown).
import { required, scriptJson, type ConsolePage } from '../../core/plugin-api.ts';

type Row = Record<string, any>;

export const reportDeletePage: ConsolePage = {
  view: new URL('./views/report-delete.hbs', import.meta.url),
  title: 'Delete',
  async load(api, _query, params) {
    const id = encodeURIComponent(params.id);
    const report = required(await api.get<Row>(`/api/ai/reports/${id}`));
    const runs = required(await api.get<{ total: number }>(`/api/ai/report-runs?reportId=${id}&size=1`)).total;
    return {
      name: report.name,
      reportUrl: `/ai/reports/${report.id}`,
      historyUrl: `/ai/reports/${report.id}/history`,
      runs,
      runsText: api.text('deleteReport.runs', { runs }),
      archived: report.archived === true,
      json: scriptJson({ id: report.id, version: report.version, runs }),
      // what report-delete.js shows, by the names it reads
      texts: scriptJson({
        deleting: api.text('deleteReport.deleting'),
        archiving: api.text('deleteReport.archiving'),
        notDeleted: api.text('deleteReport.notDeleted'),
        unreachable: api.text('common.unreachable'),
        serverAnswered: api.text('common.serverAnswered'),
      }),
    };
  },
};
