// The project management module's code beyond its manifest (manifests/pm.json):
// what the manifest cannot declare. Membership and project roles are grant
// conditions in the manifest, compiled into every statement by the kernel.
import type { PluginModule } from '../../core/plugin-api.ts';
import { listCommentRevisions, commentHooks, deleteComment } from './comments.ts';
import { activitySubscriber } from './activity.ts';
import { dueReminders, notificationSubscriber, setAllNotificationsRead, getUnreadNotificationCount } from './notifications.ts';

export const handlers: PluginModule['handlers'] = {
  listCommentRevisions,
  deleteComment,
  setAllNotificationsRead,
  getUnreadNotificationCount,
};

export const hooks: PluginModule['hooks'] = {
  Comment: commentHooks,
};

export const subscribers: PluginModule['subscribers'] = {
  activity: activitySubscriber,
  notifications: notificationSubscriber,
};

export const jobs: PluginModule['jobs'] = {
  'due-reminders': dueReminders,
};
