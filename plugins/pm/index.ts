// The project management module's code beyond its manifest (manifests/pm.json):
// what the manifest cannot declare. Membership and project roles are grant
// conditions in the manifest, compiled into every statement by the kernel.
import type { PluginModule } from '../../core/plugin-api.ts';
import { getDashboard, getProgressReport, getTaskDistribution, getWorkload } from './reports.ts';
import { archiveProject, projectHooks, unarchiveProject } from './projects.ts';
import { memberHooks } from './members.ts';
import { deleteStatus, statusHooks, statusMoveHooks, listTaskTransitions } from './flows.ts';
import { taskHooks } from './tasks.ts';
import { listPriorities } from './priorities.ts';
import { commentArchiveHooks, attachmentArchiveHooks } from './archive-hooks.ts';
import { listCommentRevisions, commentHooks, deleteComment } from './comments.ts';
import { activitySubscriber } from './activity.ts';
import { attachmentHooks, getAttachmentContent, taskAttachmentHooks, createAttachment } from './attachments.ts';
import { dueReminders, notificationSubscriber, setAllNotificationsRead, getUnreadNotificationCount } from './notifications.ts';
import { dashboardPage } from './pages/dashboard.ts';
import { boardPage } from './pages/board.ts';

export const handlers: PluginModule['handlers'] = {
  archiveProject,
  unarchiveProject,
  deleteStatus,
  listTaskTransitions,
  listPriorities,
  listCommentRevisions,
  deleteComment,
  setAllNotificationsRead,
  getUnreadNotificationCount,
  createAttachment,
  getAttachmentContent,
  getProgressReport,
  getTaskDistribution,
  getWorkload,
  getDashboard,
};

export const hooks: PluginModule['hooks'] = {
  Project: projectHooks,
  ProjectMember: memberHooks,
  TaskStatus: statusHooks,
  StatusMove: statusMoveHooks,
  Task: [taskHooks, taskAttachmentHooks],
  Comment: [commentArchiveHooks, commentHooks],
  Attachment: [attachmentArchiveHooks, attachmentHooks],
};

export const subscribers: PluginModule['subscribers'] = {
  activity: activitySubscriber,
  notifications: notificationSubscriber,
};

export const jobs: PluginModule['jobs'] = {
  'due-reminders': dueReminders,
};

export const pages: PluginModule['pages'] = { '/pm/dashboard': dashboardPage, '/pm/projects/:id/board': boardPage };

// the pages' and the board script's texts, which tenants translate like the manifest's labels
export const texts: PluginModule['texts'] = new URL('./texts.en.json', import.meta.url);
